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
