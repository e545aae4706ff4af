// Request and response schemas of merchant escrows: merchant-escrow-create, merchant-escrow-get,
// merchant-escrow-list and merchant-escrow-cancel (a merchant's key). What a merchant reads is the
// Escrow of shared/escrow/schema.ts, `merchant` included, with the merchant's own reference and
// metadata, and both parties' ids as the merchant knows them (merchantPartyId in escrows.ts: not their
// user ids, so whether a phone has an account is never told).
import { z } from 'zod';
import { ESCROW_CATEGORIES, ESCROW_STATUSES } from '../escrow/enums.ts';
import { escrowResponse } from '../escrow/schema.ts';
import { nairaAmount } from '../core/money.ts';
import {
  chars,
  httpsUrl,
  nameText,
  phoneSchema,
  queryInt,
  queryTimestamp,
  text,
  uuidSchema,
} from '../core/validation.ts';
import { exactlyOne, withRules } from '../core/rules.ts';
import { uuid } from '../core/schema.ts';

/** A merchant's reference of an escrow: 1 to 100 letters, digits, dots, underscores, colons and hyphens. */
export const MERCHANT_REFERENCE_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

/** Metadata: at most this many entries. */
export const METADATA_MAX_ENTRIES = 20;

const reference = z
  .string()
  .regex(MERCHANT_REFERENCE_PATTERN, 'must be 1 to 100 letters, digits, ".", "_", ":" or "-"')
  .meta({ minLength: 1, maxLength: 100 });

export const merchantMetadata = z
  .record(chars(1, 40), chars(0, 500))
  .refine((m) => Object.keys(m).length <= METADATA_MAX_ENTRIES, `must have at most ${METADATA_MAX_ENTRIES} entries`)
  .meta({
    maxProperties: METADATA_MAX_ENTRIES,
    description: 'Your own data, answered as you sent it: at most 20 entries, each key 1 to 40 characters, each ' +
      'value a string of at most 500',
  });

// ---- requests ----------------------------------------------------------------------------------

export const merchantEscrowCreateBody = z
  .strictObject({
    reference: reference.describe(
      'Your unique reference of this escrow (an order id): the request is answered again for it, so a retry ' +
        'with the same body answers the same escrow (200), and another body with it is refused (409)',
    ),
    category: z.enum(ESCROW_CATEGORIES),
    title: nameText(1, 200),
    description: text(0, 2000).optional(),
    amount: nairaAmount({ minKobo: 1 }),
    buyer_phone: phoneSchema.meta({ description: "The buyer's phone: the payer, and the escrow's initiator" }),
    seller_phone: phoneSchema.meta({
      description: "The seller's phone: the payee, and the escrow's counterparty. Must differ from buyer_phone",
    }),
    merchant_fee: nairaAmount({ minKobo: 0, note: 'At most 20% of amount.' }).optional(),
    metadata: merchantMetadata.optional(),
  })
  // JSON Schema cannot compare two fields: the document says these in words
  .refine((b) => b.merchant_fee === undefined || b.merchant_fee * 5 <= b.amount, {
    path: ['merchant_fee'],
    message: 'must be at most 20% of amount',
  })
  .refine((b) => b.buyer_phone !== b.seller_phone, {
    path: ['seller_phone'],
    message: 'must differ from buyer_phone',
  });
export type MerchantEscrowCreateBody = z.output<typeof merchantEscrowCreateBody>;

export const merchantEscrowGetQuery = withRules(
  z.strictObject({
    escrow_id: uuidSchema.optional(),
    reference: reference.optional(),
  }),
  [exactlyOne(['escrow_id', 'reference'], 'give escrow_id or reference (exactly one)')],
);

export const merchantEscrowListQuery = z.strictObject({
  status: z.enum(ESCROW_STATUSES).optional(),
  limit: queryInt(20, 1, 50),
  before: queryTimestamp.optional(),
});

export const merchantEscrowIdBody = z.strictObject({ escrow_id: uuidSchema });

/** The shipment a merchant names when it marks an escrow delivered. */
export const merchantTracking = z
  .strictObject({
    carrier: nameText(1, 60).describe('Who carries it (GIG Logistics, DHL, your own riders)'),
    number: nameText(1, 100).describe("The carrier's tracking number"),
    url: httpsUrl().optional().describe('Where the shipment can be followed'),
  })
  .meta({ description: 'The shipment, as the merchant names it' });

export const merchantEscrowDeliverBody = z.strictObject({
  escrow_id: uuidSchema,
  tracking: merchantTracking.optional(),
});

// ---- responses ---------------------------------------------------------------------------------

/** A merchant's escrow: the Escrow, both parties' ids, and the merchant's reference and metadata. */
export const merchantEscrowResponse = z.strictObject({
  ...escrowResponse.shape,
  initiator_id: uuid.describe(
    "The buyer's id as this merchant knows it: the same customer has the same id in all of the merchant's escrows, " +
      'and it is not their user id (it names no account elsewhere, so it tells nothing about whether the phone has one)',
  ),
  counterparty_id: uuid.describe("The seller's id as this merchant knows it (as initiator_id)"),
  reference: z.string(),
  metadata: z.record(z.string(), z.string()).nullable(),
  checkout_url: z.string().nullable().describe(
    "The payments provider's hosted checkout (card, bank transfer, USSD) where the buyer pays the total charge: " +
      'show it to the buyer. Null once the escrow is funded, cancelled or expired',
  ),
  tracking: z
    .strictObject({ carrier: z.string(), number: z.string(), url: z.string().optional() })
    .nullable()
    .describe('The shipment named with merchant-escrow-deliver; null before'),
});
export type MerchantEscrowResponse = z.input<typeof merchantEscrowResponse>;

export const merchantEscrowListResponse = z.array(merchantEscrowResponse);
export type MerchantEscrowListResponse = z.input<typeof merchantEscrowListResponse>;
