import { z } from 'zod';
import {
  TRANSACTION_CATEGORIES,
  TRANSACTION_DIRECTIONS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  VIRTUAL_ACCOUNT_STATUSES,
} from './enums.ts';
import { nairaAmount } from '../core/money.ts';
import { httpUrl, nameText, queryInt, queryTimestamp, text, uuidSchema as uuid } from '../core/validation.ts';
import { currency, naira, timestamp, uuid as responseUuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const walletTopupBody = z.strictObject({
  amount: nairaAmount({ minKobo: 100_00 }),
  card_id: uuid.optional(),
  callback_url: httpUrl().optional(),
});

export const walletWithdrawBody = z.strictObject({
  amount: nairaAmount({ minKobo: 100_00 }),
  payout_account_id: uuid.optional().meta({
    description: 'The payout account to pay; without it, the default one (400 when there is none)',
  }),
  reason: text(0, 100).optional(),
});

export const cardAddBody = z.strictObject({
  authorization_code: text(1, 100),
  last4: z.string().regex(/^[0-9]{4}$/, 'must be exactly 4 digits'), // one problem, one detail
  brand: text(1, 50),
  exp_month: z.string().regex(/^(0?[1-9]|1[0-2])$/, 'must be a month, 1-12'),
  exp_year: z.string().regex(/^[0-9]{2}([0-9]{2})?$/, 'must be a 2- or 4-digit year'),
  signature: text(1, 200),
  bank: text(0, 100).optional(),
});

export const cardIdBody = z.strictObject({ card_id: uuid });

export const payoutAddBody = z.strictObject({
  bank_code: z.string().trim().regex(/^[0-9A-Za-z]{2,10}$/, 'must be the bank code (2-10 letters or digits)'),
  bank_name: nameText(1, 100),
  account_number: z
    .string()
    .min(10, 'must be at least 10 characters')
    .max(20, 'must be at most 20 characters')
    .regex(/^[0-9]+$/, 'must contain only digits'),
  account_name: nameText(1, 200).meta({
    description:
      '1 to 200 characters once trimmed (never blank), no bidirectional control or invisible character; where the bank can be asked, the name it holds for ' +
      'the account must match (400 otherwise)',
  }),
});

export const payoutIdBody = z.strictObject({ payout_account_id: uuid });

export const transactionListQuery = z.strictObject({
  category: z.enum(TRANSACTION_CATEGORIES).optional(),
  escrow_id: uuid.optional(),
  status: z.enum(TRANSACTION_STATUSES).optional(),
  limit: queryInt(20, 1, 100),
  before: queryTimestamp.optional(),
});

// ---- responses (the `data` of the success envelope) ----------------------------------------

/** The spec's Transaction. */
export const transactionResponse = z.strictObject({
  id: responseUuid,
  type: z.enum(TRANSACTION_TYPES),
  category: z.enum(TRANSACTION_CATEGORIES),
  description: z.string(),
  amount: naira,
  currency,
  direction: z.enum(TRANSACTION_DIRECTIONS),
  status: z.enum(TRANSACTION_STATUSES),
  escrow_id: responseUuid.nullable(),
  milestone_id: responseUuid.nullable(),
  /** the processor of the movement, or `wallet` */
  provider: z.string(),
  provider_charge_id: z.string().nullable(),
  provider_transfer_id: z.string().nullable(),
  provider_refund_id: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: timestamp,
  /** null while the transaction is pending */
  completed_at: timestamp.nullable(),
});
export type TransactionResponse = z.input<typeof transactionResponse>;

/** transaction-list: a page, and the created_at of its last item (null for an empty page). */
export const transactionListResponse = z.strictObject({
  data: z.array(transactionResponse),
  next_cursor: timestamp.nullable(),
});
export type TransactionListResponse = z.input<typeof transactionListResponse>;

/** The dedicated virtual account; its bank fields are null until the provider assigns it. */
export const virtualAccountResponse = z.strictObject({
  status: z.enum(VIRTUAL_ACCOUNT_STATUSES),
  account_number: z.string().nullable(),
  account_name: z.string().nullable(),
  bank_name: z.string().nullable(),
  /** why the last request failed; null unless inactive */
  failure_reason: z.string().nullable(),
  updated_at: timestamp,
});
export type VirtualAccountResponse = z.input<typeof virtualAccountResponse>;

export const walletResponse = z.strictObject({
  balance: naira,
  pending_deposits: naira,
  pending_withdrawals: naira,
  currency,
  virtual_account: virtualAccountResponse.nullable(),
});
export type WalletResponse = z.input<typeof walletResponse>;

/**
 * A card charge that was started: a new card pays on the provider's page (authorization_url and
 * access_code); a saved card is charged directly (authorization_url null, no access_code).
 */
export const chargeStarted = z.strictObject({
  authorization_url: z.url().nullable(),
  access_code: z.string().optional(),
});
export type ChargeStarted = z.input<typeof chargeStarted>;

/** wallet-topup: the pending top-up; charge.success completes it. */
export const walletTopupResponse = z.strictObject({
  transaction_id: responseUuid,
  reference: responseUuid,
  amount: naira,
  status: z.literal('pending'),
  ...chargeStarted.shape,
});
export type WalletTopupResponse = z.input<typeof walletTopupResponse>;

/** The spec's Saved card (the authorization code never leaves the server). */
export const cardResponse = z.strictObject({
  id: responseUuid,
  last4: z.string().regex(/^[0-9]{4}$/),
  brand: z.string(),
  exp_month: z.string(),
  exp_year: z.string(),
  bank: z.string().nullable(),
  signature: z.string(),
  is_default: z.boolean(),
  created_at: timestamp,
});
export type CardResponse = z.input<typeof cardResponse>;

export const cardListResponse = z.array(cardResponse);

export const cardRemovedResponse = z.strictObject({ removed: z.literal(true), card_id: responseUuid });
export type CardRemovedResponse = z.input<typeof cardRemovedResponse>;

/** The spec's Payout account; the account number masked: asterisks, then its last four digits. */
export const payoutAccountResponse = z.strictObject({
  id: responseUuid,
  bank_name: z.string(),
  bank_code: z.string(),
  account_number: z.string().regex(/^\*+[0-9]{4}$/),
  account_name: z.string(),
  is_default: z.boolean(),
  verified: z.boolean(),
  created_at: timestamp,
});
export type PayoutAccountResponse = z.input<typeof payoutAccountResponse>;

export const payoutAccountListResponse = z.array(payoutAccountResponse);

export const payoutRemovedResponse = z.strictObject({ removed: z.literal(true), payout_account_id: responseUuid });
export type PayoutRemovedResponse = z.input<typeof payoutRemovedResponse>;

/** webhook-payments: always this for a correctly signed event, whatever its effect (spec: Events). */
export const webhookReceivedResponse = z.strictObject({ received: z.literal(true) });
