// The escrow state machine as data: who may do what from which state, and where it leads. The
// SQL transition functions implement it; docs/escrow-states.md is generated from it (a test
// fails when they differ), and the model-based test drives random operations against the real
// server and checks every answer against predict() below, so code, docs and this table cannot drift.
// The states and categories themselves are the lists in shared/enums.ts.
import { ESCROW_CATEGORIES, ESCROW_STATUSES, type EscrowCategory, type EscrowStatus, type PayerRole } from './enums.ts';

export type { EscrowStatus };

export type Operation =
  | 'fund'
  | 'accept'
  | 'decline'
  | 'cancel'
  | 'delete'
  | 'deliver'
  | 'release'
  | 'refund'
  | 'review'
  | 'job:inspection_ends'
  | 'job:14_days';

/** What the model needs to know about an escrow beyond its status. */
export interface EscrowFacts {
  status: EscrowStatus;
  category: EscrowCategory;
  payerRole: PayerRole;
  funded: boolean;
  accepted: boolean;
  delivered: boolean;
  /** each party has reviewed the other (review-submit) */
  reviewedByInitiator: boolean;
  reviewedByCounterparty: boolean;
}

export interface Transition {
  from: string; // the state, with its condition in words
  operation: string; // the endpoint or event
  who: string;
  to: string;
  also: string;
}

export const ESCROW_TRANSITIONS: Transition[] = [
  {
    from: '(new), payer_role initiator',
    operation: 'escrow-create',
    who: 'initiator',
    to: 'draft',
    also: 'fee breakdown stored; conversation created',
  },
  {
    from: '(new), payer_role counterparty',
    operation: 'escrow-create',
    who: 'initiator',
    to: 'invite_pending',
    also: 'invite SMS and notification to the counterparty',
  },
  {
    from: 'draft',
    operation: 'escrow-fund (wallet, card charge, or a bank transfer that covers the total)',
    who: 'payer',
    to: 'active (funded, awaiting acceptance)',
    also: 'total charge locked in the escrow hold; invite SMS to the counterparty',
  },
  {
    from: 'draft',
    operation: 'bank transfer below the total',
    who: 'payer',
    to: 'draft',
    also: 'amount credited to the wallet; shortfall told by SMS and notification',
  },
  {
    from: 'invite_pending',
    operation: 'escrow-accept',
    who: 'counterparty (the payer)',
    to: 'active (accepted, awaiting funding)',
    also:
      '`active` notification to the initiator; `payment_requested` to the payer (entity: the pending funding transaction)',
  },
  {
    from: 'active (funded, awaiting acceptance)',
    operation: 'escrow-accept',
    who: 'counterparty (the payee)',
    to: 'funded',
    also: '`active` notification to the initiator',
  },
  {
    from: 'active (accepted, awaiting funding)',
    operation: 'escrow-fund',
    who: 'payer',
    to: 'funded',
    also: 'total charge locked; payment request marked succeeded',
  },
  {
    from: 'draft, invite_pending, active (unfunded)',
    operation: 'escrow-cancel',
    who: 'either party',
    to: 'cancelled',
    also: 'pending funding transactions canceled',
  },
  {
    from: 'draft, invite_pending, active (unfunded)',
    operation: 'escrow-decline',
    who: 'counterparty',
    to: 'cancelled',
    also: 'pending funding transactions canceled',
  },
  {
    from: 'active (funded, awaiting acceptance)',
    operation: 'escrow-decline',
    who: 'counterparty',
    to: 'refunded',
    also: "the hold goes back to the payer's wallet",
  },
  {
    from: 'active (funded, awaiting acceptance)',
    operation: 'escrow-cancel',
    who: 'payer',
    to: 'refunded',
    also: "the hold goes back to the payer's wallet",
  },
  {
    from: 'draft',
    operation: 'escrow-delete',
    who: 'initiator',
    to: 'deleted',
    also: 'hidden from escrow-list (unless status=deleted is asked for)',
  },
  {
    from: 'funded, not yet delivered',
    operation: 'escrow-deliver',
    who: 'payee',
    to: 'goods_products: inspection; others: funded',
    also: 'goods_products: inspection_ends_at = delivery + 1 day; others: delivery recorded',
  },
  {
    from: 'funded, inspection',
    operation: 'escrow-release',
    who: 'payer',
    to: 'released',
    also:
      'payee credited (amount less seller fee), fees and VAT booked, payout started to the default payout account; auto_dealership needs the delivery recorded first',
  },
  {
    from: 'inspection, inspection_ends_at passed',
    operation: 'job (jobs-run)',
    who: 'job',
    to: 'released',
    also: 'as escrow-release',
  },
  {
    from: 'funded, inspection',
    operation: 'escrow-refund',
    who: 'payee',
    to: 'refunded',
    also: "what is left in the hold goes back to the payer's wallet",
  },
  { from: 'released, refunded, 14 days after', operation: 'job (jobs-run)', who: 'job', to: 'ended', also: '' },
  {
    from: 'released, refunded, ended; the counterparty had accepted',
    operation: 'review-submit',
    who: 'either party, once',
    to: 'ended when the other party has reviewed too (ended_at set); otherwise unchanged',
    also:
      '`review_received` notification to the other party (entity: the review; "Leave a review" while they have not reviewed); a deleted escrow is 404',
  },
];

/** The category rules, in words, for the generated document (a category without its rule does not compile). */
export const CATEGORY_RULES: Record<EscrowCategory, { roles: string; release: string }> = {
  goods_products: {
    roles: 'Buyer / Seller',
    release: 'the buyer releases, or the job releases when the 1-day inspection period after delivery ends',
  },
  hiring: { roles: 'Client / Freelancer', release: 'manual release only: the whole escrow, or milestone by milestone' },
  auto_dealership: {
    roles: 'Buyer / Dealer',
    release: 'the buyer releases by confirming the delivery the dealer recorded',
  },
  p2p_crypto: { roles: 'Sender / Receiver', release: 'the sender releases on approval, delivery or not' },
};

export type Outcome = { ok: true; next: Partial<EscrowFacts> } | { ok: false; status: 403 | 404 | 409 };

/**
 * What the server must answer when `actor` does `op` to an escrow in state `e`: the table above,
 * as a function. Only parties act here (a stranger always gets 404); `fund` is from the wallet.
 * A success is 200, and 201 for `review` (it creates the review).
 */
export function predict(e: EscrowFacts, op: Operation, actor: 'initiator' | 'counterparty' | 'job'): Outcome {
  const payer = e.payerRole === actor;
  const payee = actor !== 'job' && !payer;
  const unfunded = e.status === 'draft' || e.status === 'invite_pending' || (e.status === 'active' && !e.funded);
  const fundedUnaccepted = e.status === 'active' && e.funded && !e.accepted;
  const refuse = (status: 403 | 409): Outcome => ({ ok: false, status });
  switch (op) {
    case 'fund':
      if (!payer) return refuse(403);
      if (e.status === 'draft') return { ok: true, next: { status: 'active', funded: true } };
      if (e.status === 'active' && !e.funded) return { ok: true, next: { status: 'funded', funded: true } };
      return refuse(409);
    case 'accept':
      if (actor !== 'counterparty') return refuse(403);
      if (e.status === 'invite_pending') return { ok: true, next: { status: 'active', accepted: true } };
      if (fundedUnaccepted) return { ok: true, next: { status: 'funded', accepted: true } };
      return refuse(409);
    case 'decline':
      if (actor !== 'counterparty') return refuse(403);
      if (unfunded) return { ok: true, next: { status: 'cancelled' } };
      if (fundedUnaccepted) return { ok: true, next: { status: 'refunded' } };
      return refuse(409);
    case 'cancel':
      if (unfunded) return { ok: true, next: { status: 'cancelled' } };
      if (fundedUnaccepted) return payer ? { ok: true, next: { status: 'refunded' } } : refuse(403);
      return refuse(409);
    case 'delete':
      if (actor !== 'initiator') return refuse(403);
      return e.status === 'draft' ? { ok: true, next: { status: 'deleted' } } : refuse(409);
    case 'deliver':
      if (!payee) return refuse(403);
      if (e.status !== 'funded' || e.delivered) return refuse(409);
      return { ok: true, next: { status: e.category === 'goods_products' ? 'inspection' : 'funded', delivered: true } };
    case 'release':
      if (!payer) return refuse(403);
      if (e.status !== 'funded' && e.status !== 'inspection') return refuse(409);
      if (e.category === 'auto_dealership' && !e.delivered) return refuse(409);
      return { ok: true, next: { status: 'released' } };
    case 'refund':
      if (!payee) return refuse(403);
      if (e.status !== 'funded' && e.status !== 'inspection') return refuse(409);
      return { ok: true, next: { status: 'refunded' } };
    case 'review': {
      if (actor === 'job') return refuse(409);
      if (e.status === 'deleted') return { ok: false, status: 404 };
      if (e.status !== 'released' && e.status !== 'refunded' && e.status !== 'ended') return refuse(409);
      // declined or cancelled before the counterparty accepted: no deal took place
      if (!e.accepted) return refuse(409);
      const mine = actor === 'initiator' ? e.reviewedByInitiator : e.reviewedByCounterparty;
      const theirs = actor === 'initiator' ? e.reviewedByCounterparty : e.reviewedByInitiator;
      if (mine) return refuse(409);
      const reviewed = actor === 'initiator' ? { reviewedByInitiator: true } : { reviewedByCounterparty: true };
      return { ok: true, next: theirs ? { ...reviewed, status: 'ended' } : reviewed };
    }
    case 'job:inspection_ends':
      return e.status === 'inspection' ? { ok: true, next: { status: 'released' } } : { ok: true, next: {} };
    case 'job:14_days':
      return e.status === 'released' || e.status === 'refunded'
        ? { ok: true, next: { status: 'ended' } }
        : { ok: true, next: {} };
  }
}

/** docs/escrow-states.md, generated from the table (scripts/gen-escrow-states.ts writes it). */
export function renderStatesDoc(): string {
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    '# Escrow states and transitions',
    '',
    '<!-- Generated from shared/escrow-states.ts by `npm run docs:states`; tests/unit/escrow-states.test.ts fails when this file is stale. -->',
    '',
    `States: ${ESCROW_STATUSES.join(', ')}.`,
    "`active` has two meanings, told apart by `funded_at` and `accepted_at`: funded and waiting for the counterparty to accept, or accepted and waiting for the payer's money.",
    '',
    'Refusals: a party whose role may not do it gets 403; someone who is not a party gets 404 (the escrow is not revealed); a state that does not allow it gets 409, and so does a second execution.',
    '',
    row(['From', 'Operation or event', 'Who', 'Next', 'Also happens']),
    row(['---', '---', '---', '---', '---']),
    ...ESCROW_TRANSITIONS.map((t) => row([t.from, t.operation, t.who, t.to, t.also])),
    '',
    '## Release rules by category',
    '',
    row(['Category', 'Payer / payee', 'Release']),
    row(['---', '---', '---']),
    ...ESCROW_CATEGORIES.map((c) => row([c, CATEGORY_RULES[c].roles, CATEGORY_RULES[c].release])),
    '',
  ].join('\n');
}
