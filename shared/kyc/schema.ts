// KYC request and response schemas (docs/kyc.md#endpoints).
import { z } from 'zod';
import { KYC_CHECK_STATUSES, KYC_CHECK_TYPES } from './enums.ts';
import { count, naira, timestamp } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const kycStartBody = z.strictObject({
  level: z.union([z.literal(1), z.literal(2)], { message: 'must be 1 or 2' }),
});

/** What identity-verify checks, as clients name it (director: the spec's DIRECTOR, check director_match). */
export const IDENTITY_TYPES = ['nin', 'bvn', 'cac', 'tin', 'bank_account', 'director'] as const;
export type IdentityType = (typeof IDENTITY_TYPES)[number];

/** A company registration number: RC, BN, IT, LP or LLP and up to 8 digits (spaces and case ignored). */
const RC_NUMBER = /^(RC|BN|IT|LP|LLP)?[0-9]{1,8}$/;
const compact = (s: string) => s.replace(/[\s]/g, '').toUpperCase();

/** The shape of each type's id_number (after spaces are removed), and what to say when it is not. */
const ID_FORMATS: Record<IdentityType, { re: RegExp; message: string }> = {
  nin: { re: /^[0-9]{11}$/, message: 'must be an 11-digit NIN' },
  bvn: { re: /^[0-9]{11}$/, message: 'must be an 11-digit BVN' },
  cac: { re: RC_NUMBER, message: 'must be a CAC registration number such as RC1234567 or BN1234567' },
  tin: { re: /^[0-9]{8}-[0-9]{4}$/, message: 'must be a TIN of the form 12345678-0001' },
  bank_account: { re: /^[0-9]{10}$/, message: 'must be a 10-digit NUBAN account number' },
  director: { re: /^[0-9]{11}$/, message: "must be the director's 11-digit NIN or BVN" },
};

export const identityVerifyBody = z
  .strictObject({
    type: z.enum(IDENTITY_TYPES, { message: `must be one of ${IDENTITY_TYPES.join(', ')}` }),
    id_number: z.string().max(40, 'must be at most 40 characters').transform(compact),
    bank_code: z.string().regex(/^[0-9]{3,6}$/, 'must be a bank code of 3 to 6 digits').optional(),
    rc_number: z.string().max(20, 'must be at most 20 characters').transform(compact).optional(),
  })
  .superRefine((b, ctx) => {
    const f = ID_FORMATS[b.type];
    if (!f.re.test(b.id_number)) ctx.addIssue({ code: 'custom', path: ['id_number'], message: f.message });
    if (b.type === 'bank_account' && !b.bank_code) {
      ctx.addIssue({ code: 'custom', path: ['bank_code'], message: 'is required when type is bank_account' });
    }
    if (b.type !== 'bank_account' && b.bank_code !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['bank_code'], message: 'is only accepted when type is bank_account' });
    }
    if (b.type === 'director' && !b.rc_number) {
      ctx.addIssue({ code: 'custom', path: ['rc_number'], message: 'is required when type is director' });
    }
    if (b.type === 'director' && b.rc_number && !RC_NUMBER.test(b.rc_number)) {
      ctx.addIssue({ code: 'custom', path: ['rc_number'], message: ID_FORMATS.cac.message });
    }
    if (b.type !== 'director' && b.rc_number !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['rc_number'], message: 'is only accepted when type is director' });
    }
  });
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

/** What webhook-kyc reads of a Sumsub event (the rest is kept as it came). */
export const sumsubEventSchema = z.looseObject({
  type: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
});

/** What webhook-identity reads of a result (the spec's fields; others are kept only if listed). */
export const identityEventSchema = z.looseObject({
  reference: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  verificationType: z.string().min(1, 'must not be empty').max(40, 'must be at most 40 characters'),
  status: z.string().min(1, 'must not be empty').max(40, 'must be at most 40 characters'),
});
