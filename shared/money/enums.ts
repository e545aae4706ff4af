// The closed lists of values the money area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

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

/** A user's dedicated bank account (public.virtual_accounts.status). */
export const VIRTUAL_ACCOUNT_STATUSES = ['pending', 'active', 'inactive'] as const;
export type VirtualAccountStatus = (typeof VIRTUAL_ACCOUNT_STATUSES)[number];
