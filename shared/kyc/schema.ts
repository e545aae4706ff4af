// KYC request and response schemas (docs/kyc.md#endpoints).
import { z } from 'zod';
import { KYC_CHECK_STATUSES, KYC_CHECK_TYPES } from './enums.ts';
import { count, naira, timestamp } from '../core/schema.ts';
import { chars } from '../core/validation.ts';
import { onlyWhen, patternWhen, type Rule, withRules } from '../core/rules.ts';

// ---- requests --------------------------------------------------------------------------------

export const kycStartBody = z.strictObject({
  level: z.union([z.literal(1), z.literal(2)], { message: 'must be 1 or 2' }),
});

/** What identity-verify checks, as clients name it (director: the spec's DIRECTOR, check director_match). */
export const IDENTITY_TYPES = ['nin', 'bvn', 'cac', 'tin', 'bank_account', 'director'] as const;
export type IdentityType = (typeof IDENTITY_TYPES)[number];

/**
 * The shapes of an id number as sent, spaces (any white space) allowed anywhere and letters in
 * either case: the server checks these very patterns, then removes the spaces and upper-cases
 * the letters (compact), and the document states them per type.
 */
const digits = (n: number) => `^\\s*(?:[0-9]\\s*){${n}}$`;
/** A company registration number: RC, BN, IT, LP or LLP and up to 8 digits. */
const RC_NUMBER =
  '^\\s*(?:[Rr]\\s*[Cc]|[Bb]\\s*[Nn]|[Ii]\\s*[Tt]|[Ll]\\s*[Pp]|[Ll]\\s*[Ll]\\s*[Pp])?\\s*(?:[0-9]\\s*){1,8}$';
const RC_MESSAGE = 'must be a CAC registration number such as RC1234567 or BN1234567';
const compact = (s: string) => s.replace(/\s/g, '').toUpperCase();

/** The shape of each type's id_number, and what to say when it is not. */
const ID_FORMATS: Record<IdentityType, { pattern: string; message: string }> = {
  nin: { pattern: digits(11), message: 'must be an 11-digit NIN' },
  bvn: { pattern: digits(11), message: 'must be an 11-digit BVN' },
  cac: { pattern: RC_NUMBER, message: RC_MESSAGE },
  tin: {
    pattern: `^\\s*(?:(?:[0-9]\\s*){8}-?\\s*(?:[0-9]\\s*){4}|(?:[0-9]\\s*){10})$`,
    message: 'must be a FIRS TIN such as 12345678-0001 (the dash may be left out) or a JTB TIN of 10 digits',
  },
  bank_account: { pattern: digits(10), message: 'must be a 10-digit NUBAN account number' },
  director: { pattern: digits(11), message: "must be the director's 11-digit NIN or BVN" },
};

/**
 * The number as stored (its keyed hash and last 4) and sent to the provider: spaces removed,
 * letters upper-cased, and a FIRS TIN always with its dash (12345678-0001), so the same TIN
 * written with or without it is one number. A JTB TIN (10 digits) has no dash.
 */
export function normalId(type: IdentityType, idNumber: string): string {
  const id = compact(idNumber);
  return type === 'tin' && /^[0-9]{12}$/.test(id) ? `${id.slice(0, 8)}-${id.slice(8)}` : id;
}

const identityRules: Rule[] = [
  ...IDENTITY_TYPES.map((type) =>
    patternWhen('id_number', { type }, ID_FORMATS[type].pattern, ID_FORMATS[type].message)
  ),
  onlyWhen('bank_code', { type: 'bank_account' }, { required: true }),
  onlyWhen('rc_number', { type: 'director' }, { required: true }),
  patternWhen('rc_number', { type: 'director' }, RC_NUMBER, RC_MESSAGE),
];

export const identityVerifyBody = withRules(
  z.strictObject({
    type: z.enum(IDENTITY_TYPES, { message: `must be one of ${IDENTITY_TYPES.join(', ')}` }),
    id_number: chars(0, 40).meta({ description: 'Its format depends on type; spaces anywhere are ignored' }),
    bank_code: z.string().regex(/^[0-9]{3,6}$/, 'must be a bank code of 3 to 6 digits').optional(),
    rc_number: chars(0, 20).optional(),
  }),
  identityRules,
).transform((b) => ({
  ...b,
  id_number: normalId(b.type, b.id_number),
  rc_number: b.rc_number && compact(b.rc_number),
}));
export type IdentityVerifyBody = z.output<typeof identityVerifyBody>;

// ---- responses -------------------------------------------------------------------------------

const limits = z.strictObject({
  single: naira,
  daily: naira,
  /** null: no limit */
  balance: naira.nullable(),
});

const check = z.strictObject({
  type: z.enum(KYC_CHECK_TYPES),
  status: z.enum(KYC_CHECK_STATUSES),
  /** a failed check only */
  reject_labels: z.array(z.string()).optional(),
  /** a failed check only: false after a FINAL rejection */
  can_retry: z.boolean().optional(),
  updated_at: timestamp,
});

export const kycStatusResponse = z.strictObject({
  tier: count,
  limits,
  /** what counts toward the daily limit since 00:00 Africa/Lagos, in naira */
  used_today: naira,
  checks: z.array(check),
  /** null at the highest tier */
  next_tier: z.strictObject({ tier: count, needs: z.array(z.enum(KYC_CHECK_TYPES)) }).nullable(),
});
export type KycStatusResponse = z.input<typeof kycStatusResponse>;

export const kycStartResponse = z.strictObject({
  /** the KYC provider's SDK access token for this user and level */
  token: z.string().min(1),
  level: z.union([z.literal(1), z.literal(2)]),
  /** seconds the token stays valid */
  expires_in: count,
});

export const identityVerifyResponse = z.strictObject({
  reference: z.string().regex(/^idv_[0-9a-f]{32}$/),
  type: z.enum(IDENTITY_TYPES),
  status: z.literal('pending'),
});

/** webhook-kyc and webhook-identity: every authenticated event is acknowledged. */
export const kycWebhookResponse = z.strictObject({ received: z.literal(true) });

/** What webhook-kyc reads of a Sumsub event (the inbox keeps only private.kyc_sumsub_kept of it). */
export const sumsubEventSchema = z.looseObject({
  type: chars(1, 100),
});

/** What webhook-identity reads of a result (the spec's fields; others are kept only if listed). */
export const identityEventSchema = z.looseObject({
  reference: chars(1, 100),
  verificationType: chars(1, 40),
  status: chars(1, 40),
  firstName: chars(0, 200).optional().meta({
    description: 'NIN and BVN: the first name found for the number (compared with the profile, never stored)',
  }),
  middleName: chars(0, 200).optional().meta({ description: 'NIN and BVN: the middle names found, if any' }),
  lastName: chars(0, 200).optional().meta({ description: 'NIN and BVN: the surname found for the number' }),
});
