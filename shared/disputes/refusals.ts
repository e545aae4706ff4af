// The refusals of the disputes area: each code declared once (docs/errors.md lists them all). SQL
// raises them with their facts (supabase/migrations/*_refusal_facts_escrow.sql); these write the
// sentences. A dispute on an escrow the caller is not a party to is escrow_not_found, a state of
// the escrow that allows no dispute escrow_wrong_state (shared/escrow/refusals.ts).
import { refusal } from '../core/http.ts';
import { nairaEn as naira } from '../core/money.ts';

export const DISPUTE_NOT_FOUND = refusal<{ by: 'escrow' | 'id' }>({
  code: 'dispute_not_found',
  status: 404,
  when: 'The escrow has no dispute (dispute-get), or no dispute has this id (admin-dispute-resolve)',
  then: 'Check the id; dispute-raise opens a dispute',
  message: (f) => f.by === 'escrow' ? 'No dispute on this escrow' : 'dispute not found',
  example: { by: 'escrow' },
});

export const DISPUTE_NOT_OPEN = refusal({
  code: 'dispute_not_open',
  status: 409,
  when: 'The escrow has no open dispute (none was raised, or it was settled or withdrawn)',
  then: 'Read the dispute (dispute-get); only an open dispute is negotiated',
  message: () => 'this escrow has no open dispute',
  example: {},
});

export const DISPUTE_WRONG_STATE = refusal<{ status: string; action: 'negotiate' | 'resolve' }>({
  code: 'dispute_wrong_state',
  status: 409,
  when: 'The dispute is escalated, so the parties no longer negotiate it; or an admin resolves a dispute that is ' +
    'settled or withdrawn already',
  then: 'Read the dispute: an escalated one waits for an admin; a settled one is done',
  message: (f) =>
    f.action === 'negotiate'
      ? `this dispute is ${f.status} and is no longer negotiated by the parties`
      : `this dispute is ${f.status} already`,
  example: { status: 'escalated', action: 'negotiate' },
});

export const DISPUTE_WRONG_PARTY = refusal<{ operation: 'respond' | 'withdraw'; role: 'other_party' | 'raiser' }>({
  code: 'dispute_wrong_party',
  status: 403,
  when: 'A party answers their own proposal, or withdraws a dispute the other party raised',
  then: 'Do not offer the operation to this party',
  message: (f) =>
    f.operation === 'respond'
      ? 'only the other party can answer this proposal'
      : 'only the party who raised this dispute can withdraw it',
  example: { operation: 'withdraw', role: 'raiser' },
});

export const ADMIN_IS_PARTY = refusal<{ dispute_id: string }>({
  code: 'admin_is_party',
  status: 403,
  when: 'The admin is a party to the disputed escrow: no one decides their own case',
  then: 'Leave the dispute to another admin',
  message: () => 'an admin cannot resolve a dispute on their own escrow',
  example: { dispute_id: '6f1c2a4e-9b1d-4e8a-8f0a-2c3d4e5f6a7b' },
});

export const DISPUTE_PROPOSAL_LIMIT = refusal<{ limit: number }>({
  code: 'dispute_proposal_limit',
  status: 409,
  when: 'The party has made the most proposals allowed in one dispute',
  then: 'Wait for an answer, or for the negotiation deadline (the dispute is then escalated)',
  message: (f) => `you have made ${f.limit} proposals in this dispute: wait for an answer, or for the deadline`,
  example: { limit: 20 },
});

export const SPLIT_EXCEEDS_HELD = refusal<{ field: string; payee_amount: number; max_payee_amount: number }>({
  code: 'split_exceeds_held',
  status: 409,
  when: "A split's payee_amount is not less than what the escrow still holds (a split leaves each party something)",
  then: 'Propose a smaller payee_amount, or release or refund instead',
  message: () => 'The split gives the payee as much as the escrow still holds, or more',
  details: (f) => [{
    field: f.field,
    message: `payee_amount must be from 0.01 to ${naira(f.max_payee_amount)} naira (what is still held, less 0.01)`,
    code: 'split_exceeds_held',
  }],
  example: { field: 'payee_amount', payee_amount: 5_000_000, max_payee_amount: 4_999_999 },
});

export const INSPECTION_ENDED = refusal<{ inspection_ended_at: string }>({
  code: 'inspection_ended',
  status: 409,
  when: "The escrow's inspection period has ended: its money is owed to the payee and no dispute can hold it",
  then: 'Nothing to do: the money is being released',
  message: () => 'the inspection period has ended: the money is being released',
  example: { inspection_ended_at: '2026-11-27T10:00:00+00:00' },
});

export const DISPUTE_WITHDRAWN_BEFORE = refusal({
  code: 'dispute_withdrawn_before',
  status: 409,
  when: 'The caller withdrew a dispute on this escrow before: one withdrawal per party, so a dispute cannot freeze ' +
    'the money again and again',
  then: 'Settle with the other party another way; the other party may still raise one',
  message: () => 'you withdrew a dispute on this escrow and cannot raise another',
  example: {},
});

export const PROPOSAL_NOT_FOUND = refusal({
  code: 'proposal_not_found',
  status: 404,
  when: "No proposal with this id in the escrow's open dispute",
  then: 'Read the dispute (dispute-get) for its open proposals',
  message: () => 'proposal not found',
  example: {},
});

export const PROPOSAL_NOT_OPEN = refusal<{ status: string }>({
  code: 'proposal_not_open',
  status: 409,
  when: 'The proposal was answered, superseded or closed already',
  then: 'Read the dispute (dispute-get) for its open proposals',
  message: (f) => `this proposal is ${f.status} and can no longer be answered`,
  example: { status: 'superseded' },
});
