// Request and response schemas of the merchants area: merchant accounts (merchant-create,
// merchant-get) and their API keys (merchant-key-create, merchant-key-list, merchant-key-revoke).
import { z } from 'zod';
import { currency, naira, timestamp, uuid } from '../core/schema.ts';
import { nairaAmount } from '../core/money.ts';
import { transactionResponse } from '../money/schema.ts';
import { nameText, uuidSchema } from '../core/validation.ts';
import { MERCHANT_STATUSES } from './enums.ts';

// ---- the name rule -----------------------------------------------------------------------------

/**
 * A merchant's name is shown to its customers in SMS, so it can carry nothing a reader could act on
 * but the name itself: letters A-Z (no look-alike letters of other scripts), digits and spaces; no
 * word a web address starts with (http, https, www) and no "dot com"; no phone number (7 digits or
 * more, spaces between them or not). Each rule is a pattern, so the document states it; with
 * nameText's, which refuses bidirectional controls and invisible characters.
 */
export const MERCHANT_NAME_CHARS = /^\s*[A-Za-z0-9 ]+\s*$/;
export const MERCHANT_NAME_NO_URL =
  /^(?!.*\b(?:[Hh][Tt][Tt][Pp][Ss]?|[Ww][Ww][Ww])\b)(?!.*\b[Dd][Oo][Tt] +(?:[Cc][Oo][Mm]|[Nn][Gg]|[Nn][Ee][Tt]|[Oo][Rr][Gg])\b)/;
export const MERCHANT_NAME_NO_PHONE = /^(?!.*(?:[0-9] *){7})/;

export const merchantName = nameText(2, 40)
  .regex(MERCHANT_NAME_NO_URL, 'must not look like a web address (http, www, "dot com")')
  .regex(MERCHANT_NAME_NO_PHONE, 'must not hold a phone number (7 digits or more)')
  .regex(MERCHANT_NAME_CHARS, 'may hold only letters A-Z, digits and spaces');

/** What an API key looks like: esk_live_ or esk_test_ and at least 32 base62 characters. */
export const MERCHANT_KEY_PATTERN = /^esk_(live|test)_[0-9A-Za-z]{32,64}$/;

// ---- requests ----------------------------------------------------------------------------------

export const merchantCreateBody = z.strictObject({
  name: merchantName.describe(
    "The business's name as its customers know it (it appears in their SMS): 2 to 40 letters A-Z, digits and " +
      'spaces, with no web address and no phone number',
  ),
});

export const merchantKeyCreateBody = z.strictObject({
  name: nameText(1, 40).describe('What the key is for (e.g. "production server"), shown in merchant-key-list'),
});

export const merchantKeyRevokeBody = z.strictObject({
  key_id: uuidSchema.describe('The id of one of your keys, from merchant-key-list'),
});

export const merchantWithdrawBody = z.strictObject({
  amount: nairaAmount({ minKobo: 100_00 }),
  payout_account_id: uuidSchema.optional().meta({
    description:
      "One of the owner's payout accounts to pay; without it, the owner's default one (400 when there is none)",
  }),
});

// ---- responses ---------------------------------------------------------------------------------

export const merchantResponse = z.strictObject({
  id: uuid,
  name: z.string(),
  status: z.enum(MERCHANT_STATUSES),
  created_at: timestamp,
});
export type MerchantResponse = z.input<typeof merchantResponse>;

export const merchantCreateResponse = merchantResponse;
export const merchantGetResponse = merchantResponse;

export const merchantKeyResponse = z.strictObject({
  id: uuid,
  name: z.string(),
  prefix: z.string().describe('The start of the key (esk_live_ or esk_test_ and 4 characters), to tell keys apart'),
  created_at: timestamp,
  last_used_at: timestamp.nullable().describe('When the key last authenticated a request (kept to the minute)'),
});
export type MerchantKeyResponse = z.input<typeof merchantKeyResponse>;

export const merchantKeyCreateResponse = z.strictObject({
  id: uuid,
  name: z.string(),
  prefix: z.string(),
  created_at: timestamp,
  key: z.string().regex(MERCHANT_KEY_PATTERN).describe(
    'The key, shown this once: only its SHA-256 is kept. Send it as `Authorization: Bearer <key>`',
  ),
});
export type MerchantKeyCreateResponse = z.input<typeof merchantKeyCreateResponse>;

export const merchantKeyListResponse = z.array(merchantKeyResponse);
export type MerchantKeyListResponse = z.input<typeof merchantKeyListResponse>;

export const merchantKeyRevokeResponse = z.strictObject({
  key_id: uuid,
  revoked_at: timestamp.describe('When the key was revoked (the first revocation, for a key revoked before)'),
});
export type MerchantKeyRevokeResponse = z.input<typeof merchantKeyRevokeResponse>;

/** The merchant's wallet: what its fees have brought in, less what was withdrawn. */
export const merchantWalletGetResponse = z.strictObject({
  balance: naira.describe("The merchant's wallet balance: its fees credited, less its withdrawals"),
  currency,
});
export type MerchantWalletResponse = z.input<typeof merchantWalletGetResponse>;

/** A merchant's withdrawal, as the owner's withdrawal would be answered (the spec's Transaction). */
export const merchantWithdrawResponse = transactionResponse;
