// Every closed set of values the service stores or answers with, written once. The zod schemas
// (shared/schemas/*), the escrow state table (scripts/lib/spec/escrow-states.ts) and the generated
// docs/escrow-states.md read them from here; the database holds the same lists as check
// constraints or enum types, and tests/integration/enums.test.ts fails, naming the value, when a
// list here and its column disagree. Adding a value: here, and a migration that widens the
// column's constraint (docs/architecture.md).

/** The spec's escrow states (public.escrows.status). */
export const ESCROW_STATUSES = [
  'draft',
  'invite_pending',
  'active',
  'funded',
  'inspection',
  'released',
  'refunded',
  'disputed',
  'cancelled',
  'deleted',
  'ended',
] as const;
export type EscrowStatus = (typeof ESCROW_STATUSES)[number];

/** Escrow categories (public.escrows.category, type public.escrow_category). */
export const ESCROW_CATEGORIES = ['goods_products', 'hiring', 'auto_dealership', 'p2p_crypto'] as const;
export type EscrowCategory = (typeof ESCROW_CATEGORIES)[number];

/** Which party pays (public.escrows.payer_role). */
export const PAYER_ROLES = ['initiator', 'counterparty'] as const;
export type PayerRole = (typeof PAYER_ROLES)[number];

/** Milestone states (public.milestones.status); a new milestone is proposed. */
export const MILESTONE_STATUSES = ['proposed', 'accepted', 'completed', 'released', 'cancelled'] as const;
export type MilestoneStatus = (typeof MILESTONE_STATUSES)[number];

/** What a transaction is (public.transactions.type). */
export const TRANSACTION_TYPES = [
  'wallet_topup',
  'virtual_account_deposit',
  'withdrawal',
  'escrow_funding',
  'escrow_release',
  'escrow_refund',
  'escrow_payout',
  'escrow_fee',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** The spec's transaction categories (public.transactions.category, type public.transaction_category). */
export const TRANSACTION_CATEGORIES = ['deposit', 'withdrawal', 'escrow'] as const;
export type TransactionCategory = (typeof TRANSACTION_CATEGORIES)[number];

/** The spec's transaction states (public.transactions.status, type public.transaction_status). */
export const TRANSACTION_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** Money in or out of the user's wallet (public.transactions.direction, type public.transaction_direction). */
export const TRANSACTION_DIRECTIONS = ['in', 'out'] as const;
export type TransactionDirection = (typeof TRANSACTION_DIRECTIONS)[number];

/** The event a notification reports (public.notifications.event_type). */
export const NOTIFICATION_EVENT_TYPES = [
  'escrow_created',
  'invite_received',
  'funded',
  'funding_shortfall',
  'active',
  'payment_requested',
  'declined',
  'cancelled',
  'delivered',
  'released',
  'refunded',
  'payout_succeeded',
  'payout_failed',
  'milestone_proposed',
  'milestone_updated',
  'milestone_accepted',
  'milestone_completed',
  'milestone_released',
  'review_received',
  'dispute_raised',
  'dispute_proposal',
  'dispute_proposal_rejected',
  'dispute_withdrawn',
  'dispute_deadline_soon',
  'dispute_escalated',
  'dispute_resolved',
  'kyc_tier_changed',
  'verification_failed',
  'verification_needed',
] as const;
export type NotificationEventType = (typeof NOTIFICATION_EVENT_TYPES)[number];

/** What a notification's entity_id points at (public.notifications.entity_type). */
export const ENTITY_TYPES = ['escrow', 'transaction', 'milestone', 'review', 'dispute', 'account'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** The button a notification offers (public.notifications.action_label; null: no action). */
export const ACTION_LABELS = [
  'View escrow',
  'Review invitation',
  'Fund escrow',
  'Inspect delivery',
  'Release funds',
  'Leave a review',
  'View transaction',
  'Review milestone',
  'View milestone',
  'Release milestone',
  'View dispute',
  'Respond to proposal',
  'Verify identity',
] as const;
export type ActionLabel = (typeof ACTION_LABELS)[number];

/** Why a party raised a dispute (public.disputes.reason_code; DESIGN §8.3). */
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

/** What kind of message a party sent in a conversation (public.messages.message_type); text is the default. */
export const MESSAGE_TYPES = ['text'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** A user's dedicated bank account (public.virtual_accounts.status). */
export const VIRTUAL_ACCOUNT_STATUSES = ['pending', 'active', 'inactive'] as const;
export type VirtualAccountStatus = (typeof VIRTUAL_ACCOUNT_STATUSES)[number];

/** What a one-time code is for (private.otps.context); sign-up and login codes are requested by clients. */
export const OTP_CONTEXTS = ['signup', 'login', 'reset'] as const;
export type OtpContext = (typeof OTP_CONTEXTS)[number];

/** The spec's marital statuses (public.profiles.marital_status, type public.marital_status). */
export const MARITAL_STATUSES = ['single', 'married', 'divorced', 'widowed'] as const;
export type MaritalStatus = (typeof MARITAL_STATUSES)[number];

/** A KYC check (private.kyc_checks.check_type; DESIGN §8.4): what each tier needs. */
export const KYC_CHECK_TYPES = [
  'kyc_basic',
  'kyc_address',
  'nin',
  'bvn',
  'cac',
  'tin',
  'director_match',
  'bank_account',
] as const;
export type KycCheckType = (typeof KYC_CHECK_TYPES)[number];

/** Where a check stands (private.kyc_checks.status). */
export const KYC_CHECK_STATUSES = ['pending', 'passed', 'failed'] as const;
export type KycCheckStatus = (typeof KYC_CHECK_STATUSES)[number];

/** What a failure allows (private.kyc_checks.reject_type): RETRY may try again, FINAL may not. */
export const KYC_REJECT_TYPES = ['RETRY', 'FINAL'] as const;
export type KycRejectType = (typeof KYC_REJECT_TYPES)[number];
