// The closed lists of values the escrow area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

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
