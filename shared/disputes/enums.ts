// The closed lists of values the disputes area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

/** Why a party raised a dispute (public.disputes.reason_code; docs/disputes.md). */
export const DISPUTE_REASON_CODES = [
  'item_not_received',
  'item_not_as_described',
  'item_damaged',
  'service_not_delivered',
  'service_incomplete',
  'payment_not_released',
  'fraud_suspected',
  'other',
] as const;
export type DisputeReasonCode = (typeof DISPUTE_REASON_CODES)[number];

/** A dispute's status (public.disputes.status): negotiation -> resolved | escalated | withdrawn; escalated -> resolved. */
export const DISPUTE_STATUSES = ['negotiation', 'escalated', 'resolved', 'withdrawn'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** How a dispute is settled (public.disputes.outcome, public.dispute_proposals.outcome). */
export const DISPUTE_OUTCOMES = ['release', 'refund', 'split'] as const;
export type DisputeOutcome = (typeof DISPUTE_OUTCOMES)[number];

/** A settlement proposal's status (public.dispute_proposals.status). */
export const PROPOSAL_STATUSES = ['open', 'accepted', 'rejected', 'superseded', 'closed'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];
