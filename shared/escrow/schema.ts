import { z } from 'zod';
import { ESCROW_CATEGORIES, ESCROW_STATUSES, MILESTONE_STATUSES, PAYER_ROLES } from './enums.ts';
import { nairaAmount } from '../core/money.ts';
import {
  chars,
  dateSchema as date,
  httpUrl,
  nameText,
  phoneSchema,
  queryInt,
  queryTimestamp,
  text,
  uuidSchema as uuid,
} from '../core/validation.ts';
import { exactlyOne, minFields, onlyWhen, withRules } from '../core/rules.ts';
import { count, currency, isoDate, naira, timestamp, uuid as responseUuid } from '../core/schema.ts';
import { chargeStarted } from '../money/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const escrowCreateBody = z.strictObject({
  category: z.enum(ESCROW_CATEGORIES),
  payer_role: z.enum(PAYER_ROLES),
  title: nameText(1, 200),
  // the same formats and the same readable sentence as every other phone field
  counterparty_phone: phoneSchema.meta({
    description: "The counterparty's phone: someone else's number (the caller's own is refused with 409)",
  }),
  amount: nairaAmount({ minKobo: 1 }),
  description: text(0, 2000).optional(),
});

export const escrowIdQuery = z.strictObject({ escrow_id: uuid });

export const escrowListQuery = z.strictObject({
  status: z.enum(ESCROW_STATUSES).optional(),
  limit: queryInt(20, 1, 50),
  before: queryTimestamp.optional(),
});

export const escrowIdBody = z.strictObject({ escrow_id: uuid });

/** accept / decline: by escrow id or by the invite token, exactly one */
export const escrowInviteBody = withRules(
  z.strictObject({
    escrow_id: uuid.optional(),
    invite_token: chars(20, 200, 'is not a valid invite token').optional(),
  }),
  [exactlyOne(['escrow_id', 'invite_token'], 'give escrow_id or invite_token (exactly one)')],
);

export const escrowFundBody = withRules(
  z.strictObject({
    escrow_id: uuid,
    method: z.enum(['wallet', 'card', 'saved_card', 'bank_transfer']),
    card_id: uuid.optional(),
    callback_url: httpUrl().optional(),
  }),
  [
    onlyWhen('card_id', { method: 'saved_card' }, { required: true }),
    onlyWhen('callback_url', { method: 'card' }),
  ],
);

export const milestoneCreateBody = z.strictObject({
  escrow_id: uuid,
  title: nameText(1, 200),
  amount: nairaAmount({ minKobo: 1 }),
  description: text(0, 2000).optional(),
  due_date: date.optional(),
});

export const milestoneUpdateBody = withRules(
  z.strictObject({
    milestone_id: uuid,
    title: nameText(1, 200).optional(),
    description: text(0, 2000).nullable().optional(),
    amount: nairaAmount({ minKobo: 1 }).optional(),
    due_date: date.nullable().optional(),
    changes_note: text(0, 2000).optional(),
  }),
  [minFields(2, 'must change at least one field', 'milestone_id and at least one field to change')],
);

export const milestoneIdBody = z.strictObject({ milestone_id: uuid });

// ---- responses (the `data` of the success envelope) ----------------------------------------

/** The spec's fee breakdown, in naira. */
export const feeBreakdownResponse = z.strictObject({
  escrow_amount: naira,
  payer_fee: naira,
  vat: naira,
  total_charge: naira,
  seller_fee: naira,
  merchant_fee: naira.describe(
    "A merchant escrow's commission, out of the seller's side (0 for an escrow made in the app)",
  ),
  seller_payout: naira.describe('What the seller receives: the amount less the seller fee and the merchant fee'),
});

const escrowFields = {
  id: responseUuid,
  initiator_id: responseUuid,
  /** null to the initiator until the counterparty has accepted or declined */
  counterparty_id: responseUuid.nullable(),
  category: z.enum(ESCROW_CATEGORIES),
  payer_role: z.enum(PAYER_ROLES),
  title: z.string(),
  description: z.string(),
  counterparty_phone: z.string().regex(/^\+234[0-9]{10}$|^\+234[0-9]\*{7}[0-9]{2}$/).describe(
    'The phone the initiator named, whole to the initiator only; anyone else sees it masked: the first 4 digits ' +
      "and the last 2, the 7 between as * (+2348*******78). A deleted counterparty's phone is kept masked for everyone.",
  ),
  transaction_type: z.string(),
  release_type: z.string(),
  amount: naira,
  currency,
  status: z.enum(ESCROW_STATUSES),
  inspection_period_days: count,
  created_at: timestamp,
  funded_at: timestamp.nullable(),
  released_at: timestamp.nullable(),
  // beyond the spec's fields: what a client needs to show the deal
  fee_breakdown: feeBreakdownResponse,
  released_amount: naira,
  accepted_at: timestamp.nullable(),
  delivered_at: timestamp.nullable(),
  inspection_ends_at: timestamp.nullable(),
  refunded_at: timestamp.nullable(),
  cancelled_at: timestamp.nullable(),
  declined_at: timestamp.nullable(),
  updated_at: timestamp,
  /** the merchant that created the escrow for its customers (docs/merchants.md), null for an app escrow */
  merchant: z
    .strictObject({
      id: responseUuid,
      name: z.string(),
      fee: naira.describe("The merchant's commission, taken from the payee's side"),
    })
    .nullable(),
};

/** The spec's Escrow as one of its parties reads it (escrow-get and every transition). */
export const escrowResponse = z.strictObject(escrowFields);
export type EscrowResponse = z.input<typeof escrowResponse>;

/** An escrow-list item: the escrow with its conversation_id. */
export const escrowListItemResponse = z.strictObject({ ...escrowFields, conversation_id: responseUuid });
export type EscrowListItemResponse = z.input<typeof escrowListItemResponse>;

export const escrowListResponse = z.array(escrowListItemResponse);

export const escrowCreateResponse = z.strictObject({
  escrow_id: responseUuid,
  conversation_id: responseUuid,
  invite_token: z.string().min(20),
  fee_breakdown: feeBreakdownResponse,
});
export type EscrowCreateResponse = z.input<typeof escrowCreateResponse>;

/**
 * escrow-fund: from the wallet, the funded escrow; by bank transfer, the account to pay into
 * (its fields null while the provider has not assigned it); by card, the pending charge.
 */
export const escrowFundResponse = z.union([
  escrowResponse,
  z.strictObject({
    escrow_id: responseUuid,
    status: z.literal('awaiting_bank_transfer'),
    amount: naira,
    virtual_account: z.strictObject({
      account_number: z.string().nullable(),
      account_name: z.string().nullable(),
      bank_name: z.string().nullable(),
    }),
  }),
  z.strictObject({
    escrow_id: responseUuid,
    transaction_id: responseUuid,
    reference: responseUuid,
    amount: naira,
    status: z.literal('pending'),
    ...chargeStarted.shape,
  }),
]);
export type EscrowFundResponse = z.input<typeof escrowFundResponse>;

/** The spec's Milestone. */
export const milestoneResponse = z.strictObject({
  id: responseUuid,
  escrow_id: responseUuid,
  created_by: responseUuid,
  milestone_index: z.int().positive(),
  title: z.string(),
  description: z.string().nullable(),
  amount: naira,
  due_date: isoDate.nullable(),
  status: z.enum(MILESTONE_STATUSES),
  initiator_approved: z.boolean(),
  counterparty_approved: z.boolean(),
  changes_note: z.string().nullable(),
  release_tx_id: responseUuid.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  accepted_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  released_at: timestamp.nullable(),
});
export type MilestoneResponse = z.input<typeof milestoneResponse>;

export const milestoneListResponse = z.array(milestoneResponse);
