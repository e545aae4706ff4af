// The escrow state machine as data: who may do what from which state, and where it leads. The
// SQL transition functions implement it; docs/escrow-states.md is generated from it (a test
// fails when they differ), and the model-based test drives random operations against the real
// server and checks every answer against predict() below, so code, docs and this table cannot drift.
// The states and categories themselves are the lists in shared/escrow/enums.ts.
import { type DisputeOutcome } from '../../../shared/disputes/enums.ts';
import {
  ESCROW_CATEGORIES,
  ESCROW_STATUSES,
  type EscrowCategory,
  type EscrowStatus,
  type PayerRole,
} from '../../../shared/escrow/enums.ts';

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
  | 'message'
  | 'dispute-raise'
  | 'dispute-propose'
  | 'dispute-respond'
  | 'dispute-withdraw'
  | 'job:inspection_ends'
  | 'job:dispute_deadline'
  | 'job:14_days';

/** A party by role in the deal. */
export type Side = 'payer' | 'payee';

/** How a dispute is to be settled: release, refund, or split with the payee's share (kobo). */
export interface Settlement {
  outcome: DisputeOutcome;
  /** split only: the payee's share P of what is not yet released */
  payeeAmount?: number;
}

/** The escrow's open dispute (negotiation or escalated; a resolved or withdrawn one is no longer open). */
export interface DisputeFacts {
  status: 'negotiation' | 'escalated';
  raisedBy: Side;
  /** the state the dispute interrupted, which a withdrawal returns to */
  previous: 'funded' | 'inspection';
  /** the payer sent a message, made a proposal or answered one since it was raised */
  payerTookPart: boolean;
  /** each party's open proposal (a newer one replaces it) */
  proposals: Partial<Record<Side, Settlement>>;
}

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
  /** the escrow amount and the part of it already released, in kobo (a split checks P against the rest) */
  amount: number;
  releasedAmount: number;
  /** the open dispute, or null */
  dispute: DisputeFacts | null;
  /** the parties who withdrew a dispute on this escrow (they cannot raise another) */
  withdrew?: Partial<Record<Side, boolean>>;
}

/** What an operation carries beyond who does it (dispute-propose, dispute-respond). */
export interface OperationArgs {
  /**
   * dispute-propose: the outcome and payee_amount as sent (kobo; undefined: absent). A split needs
   * 1 <= P <= R - 1 (R: the amount not yet released); a payee_amount with release or refund, or a
   * split without one or below 1 kobo, fails validation (400) before anything else; a P above
   * R - 1 depends on what is held, and is 409 (split_exceeds_held).
   */
  proposal?: Settlement;
  /**
   * dispute-respond: the proposal answered (null: an id the server does not know), whose it is,
   * whether it is still open, and whether it belongs to the escrow's open dispute.
   */
  target?: (Settlement & { by: Side; open: boolean; current: boolean }) | null;
  accept?: boolean;
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
    from: '(new), by a merchant',
    operation: 'merchant-escrow-create',
    who: "the merchant's key (buyer: initiator and payer; seller: counterparty)",
    to: 'draft',
    also: 'fee breakdown stored; conversation created; placeholder users for phones without an account; SMS to ' +
      "both parties naming the merchant (within the merchant's SMS limits)",
  },
  {
    from: "draft, a merchant's",
    operation: "the buyer's payment through the merchant's checkout",
    who: 'payer',
    to: "funded (no accept step: the terms were agreed on the merchant's platform)",
    also: 'total charge locked in the escrow hold',
  },
  {
    from: "draft, a merchant's (unfunded)",
    operation: 'merchant-escrow-cancel',
    who: "the merchant's key",
    to: 'cancelled',
    also: "another merchant's escrow is 404; a funded one 409",
  },
  {
    from: "draft, a merchant's (unfunded)",
    operation: 'the job, MERCHANT_ESCROW_EXPIRY_HOURS (72) after creation',
    who: 'job',
    to: 'cancelled',
    also: 'the pending checkout charge canceled; a payment that still arrives is recorded to be refunded ' +
      'through the provider, never credited to a wallet',
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
    from: "funded, not yet delivered, a merchant's",
    operation: 'merchant-escrow-deliver',
    who: "the merchant's key",
    to: 'as escrow-deliver',
    also: "the merchant's tracking kept; another merchant's escrow is 404; not funded or delivered 409",
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
  {
    from: 'funded, inspection',
    operation: 'dispute-raise',
    who: 'either party',
    to: 'disputed',
    also:
      'dispute in negotiation: negotiation_deadline = raised + 72 h, auto_release_at the same only when the payer raised it; the inspection clock stops (what was left of it is kept); 201. 409 once the inspection period has ended, and for a party who withdrew a dispute on this escrow before',
  },
  {
    from: 'disputed (negotiation)',
    operation: 'dispute-propose (release, refund, or split with payee_amount P, 0.01 <= P <= R - 0.01)',
    who: 'either party',
    to: 'disputed',
    also:
      "replaces the proposer's open proposal; the other party is asked to answer; P below 0.01 is 400, P above R - 0.01 is 409; 201",
  },
  {
    from: 'disputed (negotiation)',
    operation: 'dispute-respond, reject',
    who: 'the other party (the proposer: 403)',
    to: 'disputed',
    also: 'the proposal is rejected; an answer that is no longer open is 409',
  },
  {
    from: 'disputed (negotiation)',
    operation: 'dispute-respond, accept',
    who: 'the other party (the proposer: 403)',
    to: 'release: released; refund: refunded; split: released',
    also:
      'settled at once over what is held (R = amount not yet released): release pays the payee R less the seller fee on R; refund returns the whole hold to the payer; split pays the payee P less the seller fee on P and refunds R - P with the payer fee and VAT on it, the platform keeping the rest; the hold ends at 0',
  },
  {
    from: 'disputed (negotiation)',
    operation: 'dispute-withdraw',
    who: 'the party who raised it (the other: 403)',
    to: 'the state it left: funded, or inspection',
    also: 'an inspection resumes with the time it had left; open proposals closed',
  },
  {
    from: 'disputed (negotiation), 24 h before negotiation_deadline',
    operation: 'job (jobs-run)',
    who: 'job',
    to: 'disputed',
    also: 'both parties told (once)',
  },
  {
    from:
      'disputed (negotiation), negotiation_deadline passed, the payer raised it and took no part since (no message, proposal or answer)',
    operation: 'job (jobs-run)',
    who: 'job',
    to: 'released',
    also: 'as an accepted release',
  },
  {
    from: 'disputed (negotiation), negotiation_deadline passed, otherwise',
    operation: 'job (jobs-run)',
    who: 'job',
    to: 'disputed (the dispute escalated to the admin queue)',
    also:
      'open proposals closed; dispute-propose, dispute-respond and dispute-withdraw are 409 from then on; only an admin moves the money',
  },
  {
    from: 'disputed',
    operation:
      'escrow-release, escrow-refund, escrow-deliver, escrow-cancel, escrow-decline, milestone operations; the inspection job',
    who: 'anyone',
    to: 'disputed (409; the job leaves it)',
    also: 'no automatic release while disputed',
  },
  {
    from: 'any state but deleted (404)',
    operation: 'message-send',
    who: 'either party',
    to: 'unchanged',
    also:
      "201 (409 once the deal closed more than 30 days ago); in a negotiated dispute, the payer's message counts as taking part",
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

export type Outcome =
  | {
    ok: true;
    /** 201 where the operation creates something (review, message, dispute, proposal), else 200 */
    status: 200 | 201;
    next: Partial<EscrowFacts>;
    /** the dispute was settled with this money (dispute-respond accept, the job's release) */
    settled?: Settlement;
  }
  | { ok: false; status: 400 | 403 | 404 | 409 };

/** The escrow amount not yet released (R of docs/disputes.md#money). */
export const unreleased = (e: EscrowFacts): number => e.amount - e.releasedAmount;

/** Whether a dispute-propose body passes validation (zod), before the server looks at the escrow. */
function proposalBodyValid(p: Settlement): boolean {
  if (p.outcome !== 'split') return p.payeeAmount === undefined;
  return p.payeeAmount !== undefined && Number.isSafeInteger(p.payeeAmount) && p.payeeAmount >= 1;
}

/** The escrow after a settlement: released (release, split) or refunded, the dispute closed. */
function settle(e: EscrowFacts, s: Settlement, status: 200 | 201): Outcome {
  const next: Partial<EscrowFacts> = { dispute: null };
  if (s.outcome === 'refund') next.status = 'refunded';
  else {
    next.status = 'released';
    next.releasedAmount = s.outcome === 'split' ? e.releasedAmount + (s.payeeAmount as number) : e.amount;
  }
  return { ok: true, status, next, settled: s };
}

/**
 * What the server must answer when `actor` does `op` to an escrow in state `e`: the table above,
 * as a function. Only parties act here (a stranger always gets 404); `fund` is from the wallet.
 * `args` carries what dispute-propose and dispute-respond send. Bodies are valid unless `args`
 * says otherwise.
 */
export function predict(
  e: EscrowFacts,
  op: Operation,
  actor: 'initiator' | 'counterparty' | 'job',
  args: OperationArgs = {},
): Outcome {
  const payer = e.payerRole === actor;
  const payee = actor !== 'job' && !payer;
  const side: Side = payer ? 'payer' : 'payee';
  const unfunded = e.status === 'draft' || e.status === 'invite_pending' || (e.status === 'active' && !e.funded);
  const fundedUnaccepted = e.status === 'active' && e.funded && !e.accepted;
  const negotiating = e.status === 'disputed' && e.dispute?.status === 'negotiation' ? e.dispute : null;
  const refuse = (status: 400 | 403 | 404 | 409): Outcome => ({ ok: false, status });
  const ok = (next: Partial<EscrowFacts>, status: 200 | 201 = 200): Outcome => ({ ok: true, status, next });
  switch (op) {
    case 'fund':
      if (!payer) return refuse(403);
      if (e.status === 'draft') return ok({ status: 'active', funded: true });
      if (e.status === 'active' && !e.funded) return ok({ status: 'funded', funded: true });
      return refuse(409);
    case 'accept':
      if (actor !== 'counterparty') return refuse(403);
      if (e.status === 'invite_pending') return ok({ status: 'active', accepted: true });
      if (fundedUnaccepted) return ok({ status: 'funded', accepted: true });
      return refuse(409);
    case 'decline':
      if (actor !== 'counterparty') return refuse(403);
      if (unfunded) return ok({ status: 'cancelled' });
      if (fundedUnaccepted) return ok({ status: 'refunded' });
      return refuse(409);
    case 'cancel':
      if (unfunded) return ok({ status: 'cancelled' });
      if (fundedUnaccepted) return payer ? ok({ status: 'refunded' }) : refuse(403);
      return refuse(409);
    case 'delete':
      if (actor !== 'initiator') return refuse(403);
      return e.status === 'draft' ? ok({ status: 'deleted' }) : refuse(409);
    case 'deliver':
      if (!payee) return refuse(403);
      if (e.status !== 'funded' || e.delivered) return refuse(409);
      return ok({ status: e.category === 'goods_products' ? 'inspection' : 'funded', delivered: true });
    case 'release':
      if (!payer) return refuse(403);
      if (e.status !== 'funded' && e.status !== 'inspection') return refuse(409);
      if (e.category === 'auto_dealership' && !e.delivered) return refuse(409);
      return ok({ status: 'released', releasedAmount: e.amount });
    case 'refund':
      if (!payee) return refuse(403);
      if (e.status !== 'funded' && e.status !== 'inspection') return refuse(409);
      return ok({ status: 'refunded' });
    case 'review': {
      if (actor === 'job') return refuse(409);
      if (e.status === 'deleted') return refuse(404);
      if (e.status !== 'released' && e.status !== 'refunded' && e.status !== 'ended') return refuse(409);
      // declined or cancelled before the counterparty accepted: no deal took place
      if (!e.accepted) return refuse(409);
      const mine = actor === 'initiator' ? e.reviewedByInitiator : e.reviewedByCounterparty;
      const theirs = actor === 'initiator' ? e.reviewedByCounterparty : e.reviewedByInitiator;
      if (mine) return refuse(409);
      const reviewed = actor === 'initiator' ? { reviewedByInitiator: true } : { reviewedByCounterparty: true };
      return ok(theirs ? { ...reviewed, status: 'ended' } : reviewed, 201);
    }
    case 'message':
      if (actor === 'job' || e.status === 'deleted') return refuse(404);
      // the escrow's conversation; what the payer writes in a negotiated dispute is taking part
      return ok(negotiating && payer ? { dispute: { ...negotiating, payerTookPart: true } } : {}, 201);
    case 'dispute-raise':
      if (actor === 'job') return refuse(404);
      if (e.status !== 'funded' && e.status !== 'inspection') return refuse(409);
      if (e.withdrew?.[side]) return refuse(409);
      return ok({
        status: 'disputed',
        dispute: { status: 'negotiation', raisedBy: side, previous: e.status, payerTookPart: false, proposals: {} },
      }, 201);
    case 'dispute-propose': {
      const p = args.proposal ?? { outcome: 'release' };
      if (!proposalBodyValid(p)) return refuse(400);
      if (actor === 'job') return refuse(404);
      if (!negotiating) return refuse(409);
      if (p.outcome === 'split' && (p.payeeAmount as number) > unreleased(e) - 1) return refuse(409);
      const proposals = { ...negotiating.proposals, [side]: p };
      return ok({ dispute: { ...negotiating, proposals, payerTookPart: negotiating.payerTookPart || payer } }, 201);
    }
    case 'dispute-respond': {
      if (actor === 'job') return refuse(404);
      if (!negotiating) return refuse(409);
      const t = args.target;
      if (!t || !t.current) return refuse(404);
      if (t.by === side) return refuse(403);
      if (!t.open) return refuse(409);
      if (args.accept) return settle(e, t, 200);
      const proposals = { ...negotiating.proposals };
      delete proposals[t.by];
      return ok({ dispute: { ...negotiating, proposals, payerTookPart: negotiating.payerTookPart || payer } });
    }
    case 'dispute-withdraw':
      if (actor === 'job') return refuse(404);
      if (!negotiating) return refuse(409);
      if (negotiating.raisedBy !== side) return refuse(403);
      return ok({ status: negotiating.previous, dispute: null, withdrew: { ...e.withdrew, [side]: true } });
    case 'job:inspection_ends':
      return e.status === 'inspection' ? ok({ status: 'released', releasedAmount: e.amount }) : ok({});
    case 'job:dispute_deadline':
      // at the negotiation deadline: the payer raised it and then took no part -> released to the
      // payee; otherwise escalated to the admin queue (the escrow stays disputed)
      if (!negotiating) return ok({});
      if (negotiating.raisedBy === 'payer' && !negotiating.payerTookPart) return settle(e, { outcome: 'release' }, 200);
      return ok({ dispute: { ...negotiating, status: 'escalated', proposals: {} } });
    case 'job:14_days':
      return e.status === 'released' || e.status === 'refunded' ? ok({ status: 'ended' }) : ok({});
  }
}

/** docs/escrow-states.md, generated from the table (scripts/gen-escrow-states.ts writes it). */
export function renderStatesDoc(): string {
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    '# Escrow states and transitions',
    '',
    '<!-- Generated from scripts/lib/spec/escrow-states.ts by `npm run docs:states`; tests/unit/escrow-states.test.ts fails when this file is stale. -->',
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
