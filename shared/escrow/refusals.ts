// The refusals of the escrow area (escrows, their milestones, funding): each code declared once
// (docs/errors.md lists them all). SQL raises most of them with their facts (private.refuse_role,
// private.refuse_state, private.escrow_lock, ...: supabase/migrations/*_refusal_facts_escrow.sql);
// these write the sentences.
import { refusal } from '../core/http.ts';
import { nairaEn as naira } from '../core/money.ts';

export const ESCROW_NOT_FOUND = refusal({
  code: 'escrow_not_found',
  status: 404,
  when: 'No escrow with this id (or invite token) that the caller is a party to; a stranger gets the same answer ' +
    'as for an escrow that does not exist',
  then: 'Check the id (escrow-list shows the escrows the caller is a party to)',
  message: () => 'escrow not found',
  example: {},
});

/** The roles that may do an operation (the escrow's parties by what they do in it). */
type Role = 'payer' | 'payee' | 'initiator' | 'counterparty' | 'client' | 'freelancer';

const ROLE_WORDS: Record<Role, string> = {
  payer: 'payer',
  payee: 'payee',
  initiator: 'initiator',
  counterparty: 'invited counterparty',
  client: 'client',
  freelancer: 'freelancer',
};

const OPERATION_WORDS = {
  accept: 'accept this escrow',
  decline: 'decline this escrow',
  cancel_funded: 'cancel a funded escrow before it is accepted',
  delete: 'delete this escrow',
  deliver: 'mark this escrow delivered',
  fund: 'fund this escrow',
  refund: 'refund this escrow',
  release: 'release this escrow',
  complete_milestone: 'mark a milestone complete',
  release_milestone: 'release a milestone',
} as const;

/** The facts of escrow_wrong_party: the operation and the role that may do it. */
export interface WrongPartyFacts {
  operation: keyof typeof OPERATION_WORDS;
  role: Role;
}

export const ESCROW_WRONG_PARTY = refusal<WrongPartyFacts>({
  code: 'escrow_wrong_party',
  status: 403,
  when: "The caller is a party to the escrow, but the operation is another role's (e.g. the payee releasing); " +
    'the message names the role that may do it',
  then: 'Do not offer the operation to this party; the other party does it',
  message: (f) => `only the ${ROLE_WORDS[f.role] ?? f.role} can ${OPERATION_WORDS[f.operation] ?? f.operation}`,
  example: { operation: 'release', role: 'payer' },
});

const ACTION_WORDS = {
  accept: 'accept',
  decline: 'decline',
  cancel: 'cancel',
  delete: 'delete',
  deliver: 'deliver',
  fund: 'fund',
  refund: 'refund',
  release: 'release',
  auto_release: 'auto-release',
  raise_dispute: 'raise a dispute on',
  add_milestones: 'add milestones to',
  change_milestones: 'change the milestones of',
  complete_milestone: 'complete a milestone of',
  release_milestone: 'release a milestone of',
  review: 'review',
} as const;

/** The facts of escrow_wrong_state: the escrow's status, whether its money is in, the action refused. */
export interface WrongStateFacts {
  status: string;
  funded: boolean;
  action: keyof typeof ACTION_WORDS;
}

export const ESCROW_WRONG_STATE = refusal<WrongStateFacts>({
  code: 'escrow_wrong_state',
  status: 409,
  when: "The escrow's state does not allow this now (e.g. releasing a draft, accepting twice); the message says " +
    "the state, and what comes first where the next step is the other party's",
  then: 'Read the escrow (escrow-get) and offer only what its status allows',
  message: (f) => {
    const state = f.status +
      (f.status === 'active' && f.funded
        ? ' (funded, awaiting acceptance)'
        : f.status === 'active'
        ? ' (accepted, awaiting funding)'
        : '');
    const next = f.action === 'accept' && f.status === 'draft'
      ? ': the initiator funds it first (escrow-fund), then you can accept it'
      : '';
    return `cannot ${ACTION_WORDS[f.action] ?? f.action} an escrow that is ${state}${next}`;
  },
  example: { status: 'draft', funded: false, action: 'release' },
});

export const ESCROW_NOT_DELIVERED = refusal<{ category: string; payee_role: string }>({
  code: 'escrow_not_delivered',
  status: 409,
  when: 'The payer releases an escrow whose category releases only after delivery, and the payee has not marked ' +
    'it delivered (escrow-deliver)',
  then: 'Wait for the payee to mark it delivered, or raise a dispute if it never comes',
  message: (f) => `release follows delivery for ${f.category}: the ${f.payee_role} has not marked it delivered`,
  example: { category: 'goods', payee_role: 'seller' },
});

export const COUNTERPARTY_IS_SELF = refusal({
  code: 'counterparty_is_self',
  status: 409,
  when: "counterparty_phone is the caller's own phone number",
  then: "Ask for the other party's phone number",
  message: () => 'The counterparty must be someone else',
  details:
    () => [{ field: 'counterparty_phone', message: "must be someone else's number", code: 'counterparty_is_self' }],
  example: {},
});

export const VIRTUAL_ACCOUNT_REQUIRED = refusal({
  code: 'virtual_account_required',
  status: 409,
  when: 'A bank transfer funding, and the payer has no active virtual account to receive it',
  then: 'Create one with virtual-account-create, then fund again',
  message: () => 'You need an active virtual account to pay by bank transfer; create one with virtual-account-create',
  example: {},
});

// ---- milestones --------------------------------------------------------------------------------

export const MILESTONE_NOT_FOUND = refusal({
  code: 'milestone_not_found',
  status: 404,
  when: 'No milestone with this id on an escrow the caller is a party to',
  then: 'Check the id (milestone-list shows the milestones of an escrow)',
  message: () => 'milestone not found',
  example: {},
});

const MILESTONE_NEEDS = {
  approve: ['a proposed', 'approved'],
  edit: ['a proposed', 'edited'],
  complete: ['an accepted', 'completed'],
  release: ['a completed', 'released'],
} as const;

export const MILESTONE_WRONG_STATE = refusal<{ action: keyof typeof MILESTONE_NEEDS; status: string }>({
  code: 'milestone_wrong_state',
  status: 409,
  when: "The milestone's status does not allow this (e.g. releasing one not completed); the message names both",
  then: 'Read the milestones (milestone-list) and offer only what each status allows',
  message: (f) => {
    const [need, verb] = MILESTONE_NEEDS[f.action];
    return `only ${need} milestone can be ${verb} (this one is ${f.status})`;
  },
  example: { action: 'release', status: 'accepted' },
});

export const MILESTONES_HIRING_ONLY = refusal<{ category: string }>({
  code: 'milestones_hiring_only',
  status: 409,
  when: 'A milestone on an escrow whose category is not hiring',
  then: 'Use milestones on hiring escrows only',
  message: () => 'milestones are for hiring escrows',
  example: { category: 'goods' },
});

export const MILESTONES_EXCEED_AMOUNT = refusal<{ escrow_amount: number }>({
  code: 'milestones_exceed_amount',
  status: 409,
  when: "The escrow's milestones (not cancelled) would add up to more than its amount",
  then: 'Lower the amount, or change another milestone first',
  message: (f) => `milestones would add up to more than the escrow amount (${naira(f.escrow_amount)})`,
  example: { escrow_amount: 5_000_000 },
});
