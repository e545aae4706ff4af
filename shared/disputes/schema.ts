// Disputes (docs/disputes.md): requests, then the spec's Dispute object with the
// open proposals, and the admin queue's item.
import { z } from 'zod';
import { DISPUTE_OUTCOMES, DISPUTE_REASON_CODES, DISPUTE_STATUSES, PROPOSAL_STATUSES } from './enums.ts';
import { ESCROW_STATUSES } from '../escrow/enums.ts';
import { nairaAmount } from '../core/money.ts';
import { queryInt, queryTimestamp, text, uuidSchema as uuid } from '../core/validation.ts';
import { onlyWhen, withRules } from '../core/rules.ts';
import { naira, timestamp, uuid as responseUuid } from '../core/schema.ts';
import { pendingApproval } from '../operators/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const disputeRaiseBody = z.strictObject({
  escrow_id: uuid,
  reason_code: z.enum(DISPUTE_REASON_CODES),
  reason: text(10, 2000),
});

/** A settlement: release, refund, or split with the payee's share (payee_amount, naira) of what is still held. */
const settlement = {
  outcome: z.enum(DISPUTE_OUTCOMES),
  payee_amount: nairaAmount({
    minKobo: 1,
    note: "The payee's share must also leave the payer something: at most what is still held less 0.01 " +
      '(400 otherwise, saying the bound).',
  }).optional(),
};
const splitNeedsAmount = onlyWhen('payee_amount', { outcome: 'split' }, { required: true });

export const disputeProposeBody = withRules(z.strictObject({ escrow_id: uuid, ...settlement }), [splitNeedsAmount]);

export const disputeRespondBody = z.strictObject({
  escrow_id: uuid,
  proposal_id: uuid,
  accept: z.boolean({ message: 'must be true or false' }),
});

export const disputeEscrowBody = z.strictObject({ escrow_id: uuid });
export const disputeEscrowQuery = z.strictObject({ escrow_id: uuid });

export const adminDisputeListQuery = z.strictObject({
  status: z.enum(DISPUTE_STATUSES).optional(),
  limit: queryInt(20, 1, 50),
  after: queryTimestamp.optional(),
});

export const adminDisputeResolveBody = withRules(
  z.strictObject({ dispute_id: uuid, ...settlement, resolution: text(10, 2000) }),
  [splitNeedsAmount],
);

// ---- responses -------------------------------------------------------------------------------

/** A settlement proposal (payee_amount: a split's share for the payee in naira, else null). */
export const proposalResponse = z.strictObject({
  id: responseUuid,
  proposed_by: responseUuid,
  outcome: z.enum(DISPUTE_OUTCOMES),
  payee_amount: naira.nullable(),
  status: z.enum(PROPOSAL_STATUSES),
  created_at: timestamp,
  responded_at: timestamp.nullable(),
});
export type ProposalResponse = z.input<typeof proposalResponse>;

/** The spec's Dispute, plus its open proposals (docs/decisions.md#disputes). */
export const disputeResponse = z.strictObject({
  id: responseUuid,
  escrow_id: responseUuid,
  raised_by: responseUuid,
  reason_code: z.enum(DISPUTE_REASON_CODES),
  reason: z.string(),
  status: z.enum(DISPUTE_STATUSES),
  negotiation_deadline: timestamp,
  auto_release_at: timestamp.nullable(),
  resolved_by: responseUuid.nullable(),
  resolution: z.string().nullable(),
  resolved_at: timestamp.nullable(),
  created_at: timestamp,
  proposals: z.array(proposalResponse),
});
export type DisputeResponse = z.input<typeof disputeResponse>;

const partyResponse = z.strictObject({ id: responseUuid, first_name: z.string(), last_name: z.string() });

/** An item of the admin queue: the dispute, both parties, the money, and every proposal made. */
export const adminDisputeResponse = disputeResponse.extend({
  escrow_title: z.string(),
  escrow_status: z.enum(ESCROW_STATUSES),
  escrow_amount: naira,
  unreleased_amount: naira,
  outcome: z.enum(DISPUTE_OUTCOMES).nullable(),
  payee_amount: naira.nullable(),
  payer: partyResponse,
  payee: partyResponse,
});
export type AdminDisputeResponse = z.input<typeof adminDisputeResponse>;

/** admin-dispute-resolve: the resolved dispute, or (202) the approval a second operator gives. */
export const adminDisputeResolveResponse = z.union([adminDisputeResponse, pendingApproval]);

export const adminDisputeListResponse = z.array(adminDisputeResponse);
