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

// ---- account actions (admin-user-freeze, admin-user-unfreeze, admin-session-revoke, admin-sms-resend)

/** The body of an action on one user's account. */
export const adminUserActionBody = z.strictObject({
  user_id: uuidSchema,
  reason: operatorReason,
});

export const adminUserFreezeResponse = z.strictObject({
  user_id: uuid,
  frozen: z.literal(true),
  frozen_at: timestamp.describe('When the freeze began: the first freeze, when the account was frozen already'),
  changed: z.boolean().describe('false: the account was frozen already; the first freeze and its reason stand'),
});

export const adminUserUnfreezeResponse = z.strictObject({
  user_id: uuid,
  frozen: z.literal(false),
  unfrozen_at: timestamp,
});

export const adminSessionRevokeResponse = z.strictObject({
  user_id: uuid,
  sessions_ended: z.int().min(0).describe('How many live sessions were ended (0: the user had none)'),
});

export const adminSmsResendBody = z.strictObject({
  sms_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER).meta({
    description: 'The id of the message in the SMS outbox (a resend of a resend counts for the first message)',
    examples: [4821],
  }),
  reason: operatorReason,
});

export const adminSmsResendResponse = z.strictObject({
  sms_id: z.int().describe('The new message: the same text, to the same phone'),
  resend_of: z.int().describe('The message it resends'),
  kind: z.string().describe("What the message is: 'dispute_settled', 'escrow_invite', ..."),
  resends: z.int().min(1).max(3).describe(
    'How many times the message has been resent now, this one included (at most 3)',
  ),
});

export type AdminUserFreezeResponse = z.infer<typeof adminUserFreezeResponse>;
export type AdminUserUnfreezeResponse = z.infer<typeof adminUserUnfreezeResponse>;
export type AdminSessionRevokeResponse = z.infer<typeof adminSessionRevokeResponse>;
export type AdminSmsResendResponse = z.infer<typeof adminSmsResendResponse>;
