// The closed lists of values the notifications area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

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
