// Request and response schemas of the operators area: the second factor (admin-totp-enrol,
// admin-totp-verify), the reason every action takes, and four eyes (approvals).
import { z } from 'zod';
import { naira, timestamp, uuid } from '../core/schema.ts';
import { text, uuidSchema } from '../core/validation.ts';
import { OPERATOR_ROLES } from './enums.ts';

/** Every operator action's `reason` (10-500 characters): kept in the audit with the action. */
export const operatorReason = text(10, 500).meta({
  description: 'Why you act: kept in the audit with the action (10-500 characters)',
  examples: ['The provider confirmed the payment; the webhook was lost'],
});

export const adminTotpVerifyBody = z.strictObject({
  code: z.string().regex(/^[0-9]{6}$/, 'must be exactly 6 digits').meta({
    description: 'The 6-digit code the authenticator shows now (RFC 6238: SHA-1, 30-second steps)',
    examples: ['287082'],
  }),
});

export const adminTotpEnrolResponse = z.strictObject({
  otpauth_uri: z.string().meta({
    description: 'The secret as an otpauth:// URI (SHA1, 6 digits, 30 s), shown this once: enter it or scan qr_svg',
  }),
  qr_svg: z.string().meta({ description: 'The same URI as a QR code, an SVG document' }),
});

export const adminTotpVerifyResponse = z.strictObject({
  passed: z.literal(true),
  expires_at: timestamp.describe("When this session's pass ends (12 hours after the code); verify again after it"),
});

export type AdminTotpEnrolResponse = z.infer<typeof adminTotpEnrolResponse>;
export type AdminTotpVerifyResponse = z.infer<typeof adminTotpVerifyResponse>;

// ---- four eyes ------------------------------------------------------------------------------

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export const APPROVAL_DECISIONS = ['approve', 'reject'] as const;

export const approvalResponse = z.strictObject({
  id: uuid,
  action: z.string().describe("The action waiting, as in the audit: e.g. 'charge.resolve', 'user.unfreeze'"),
  target_type: z.string().describe("What it acts on: 'user', 'transaction', 'dispute', ..."),
  target_id: uuid,
  amount: naira.nullable().describe('The money it moves, in naira, when that is why it needs four eyes'),
  roles: z.array(z.enum(OPERATOR_ROLES)).describe('The roles that may perform it, and so approve it'),
  status: z.enum(APPROVAL_STATUSES).describe('expired: still pending 24 hours after it was asked for'),
  reason: z.string().describe("The first operator's reason"),
  requested_by: uuid,
  requested_at: timestamp,
  expires_at: timestamp,
  decided_by: uuid.nullable(),
  decided_at: timestamp.nullable(),
  decision_reason: z.string().nullable(),
});

/** What an action answers when it waits for a second operator (202). */
export const pendingApproval = z.strictObject({
  approval: approvalResponse.describe('The approval a second operator must give (admin-approval-decide)'),
});

export const adminApprovalDecideBody = z.strictObject({
  approval_id: uuidSchema,
  decision: z.enum(APPROVAL_DECISIONS),
  reason: operatorReason,
});

export type ApprovalResponse = z.infer<typeof approvalResponse>;

// ---- the money actions of finance operators -------------------------------------------------

export const adminChargeResolveBody = z.strictObject({
  transaction_id: uuidSchema.meta({ description: 'The held charge: its transaction id, the charge reference' }),
  reason: operatorReason,
});

export const CHARGE_RESOLVE_OUTCOMES = [
  'credited',
  'escrow:funded',
  'escrow:active',
  'credited_to_wallet',
  'refund_due',
  'failed',
] as const;

export const adminChargeResolveResponse = z.strictObject({
  transaction_id: uuid,
  provider_status: z.enum(['success', 'failed', 'abandoned']).describe("What the provider's verify answered"),
  verified_amount: naira.nullable().describe('The amount the provider confirmed, in naira (null for a failure)'),
  expected_amount: naira.describe('What the charge was expected to bring, in naira'),
  outcome: z.enum(CHARGE_RESOLVE_OUTCOMES).describe(
    "credited: the top-up's wallet got verified_amount; escrow:<status>: the expected amount funded the escrow; " +
      "credited_to_wallet: an escrow charge that could not fund its escrow, in the payer's wallet; refund_due: a " +
      "merchant escrow's charge going back to the buyer through the provider; failed: no money moved",
  ),
});

export const adminPayoutRetryBody = z.strictObject({
  transaction_id: uuidSchema.meta({ description: 'The failed payout (a withdrawal or an escrow payout)' }),
  reason: operatorReason,
});

export const adminPayoutRetryResponse = z.strictObject({
  transaction_id: uuid.describe('The new withdrawal: its id is the new transfer reference'),
  retry_of: uuid.describe('The failed payout it retries'),
  amount: naira,
  status: z.enum(['pending', 'succeeded', 'failed']).describe(
    'pending: handed to the provider (or waiting for its answer); failed: refused at once, the money back in the wallet',
  ),
  old_transfer_status: z.string().nullable().describe(
    'What the provider answered about the old transfer (failed, reversed; null: it has none by that reference)',
  ),
});

export type AdminChargeResolveResponse = z.infer<typeof adminChargeResolveResponse>;
export type AdminPayoutRetryResponse = z.infer<typeof adminPayoutRetryResponse>;
