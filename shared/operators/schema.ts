// Request and response schemas of the operators area: the second factor (admin-totp-enrol,
// admin-totp-verify), the reason every action takes, and four eyes (approvals).
import { z } from 'zod';
import { naira, timestamp, uuid } from '../core/schema.ts';
import { queryInt, text, uuidSchema } from '../core/validation.ts';
import { OPERATOR_ROLES, type OperatorRole } from './enums.ts';

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

// ---- the approvals list ---------------------------------------------------------------------

export const adminApprovalListQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional().meta({
    description: 'Only approvals in this status (pending: still decidable); all of them when omitted, pending first',
  }),
  limit: queryInt(20, 1, 50),
  after: uuidSchema.optional().meta({ description: 'The id of the last approval of the previous page' }),
});

export const adminApprovalListResponse = z.array(approvalResponse);

// ---- granting and revoking roles, resetting a factor ----------------------------------------

export const adminRoleGrantBody = z.strictObject({
  user_id: uuidSchema,
  role: z.enum(OPERATOR_ROLES),
  reason: operatorReason,
});

export const adminRoleRevokeBody = adminRoleGrantBody;

export const adminTotpResetBody = z.strictObject({ user_id: uuidSchema, reason: operatorReason });

/** What an approved role.grant answered (kept in the approval's result). */
export interface RoleGranted {
  user_id: string;
  role: OperatorRole;
  granted_at: string;
  granted_by: string;
}

export const adminRoleRevokeResponse = z.strictObject({
  user_id: uuid,
  role: z.enum(OPERATOR_ROLES).describe('The role revoked'),
  granted_at: timestamp.describe('When the grant it ended took effect'),
  roles: z.array(z.enum(OPERATOR_ROLES)).describe('The roles the user still holds (none: no longer an operator)'),
});

// ---- the audit ------------------------------------------------------------------------------

export const AUDIT_ACTION_PATTERN = '^[a-z][a-z_]*(\\.[a-z][a-z_]*)+$';

export const adminAuditListQuery = z.strictObject({
  operator_id: uuidSchema.optional().meta({ description: 'Only what this operator did or opened' }),
  target_id: uuidSchema.optional().meta({ description: 'Only rows about this target (a user, an escrow, ...)' }),
  action: z.string().max(100).regex(new RegExp(AUDIT_ACTION_PATTERN), "must be an action such as 'role.grant'")
    .optional().meta({ description: "Only this action, e.g. 'role.grant', 'approval.approve'" }),
  limit: queryInt(50, 1, 200),
  after: z.string().regex(/^[0-9]{1,18}$/, 'must be the id of an audit row').optional().meta({
    description: 'The id of the last row of the previous page (newest first: older rows follow)',
  }),
});

export const auditRowResponse = z.strictObject({
  id: z.string().describe('The row id (digits), increasing with time; the cursor of `after`'),
  operator_id: uuid.describe('Who acted or looked (for the grant script: the user whose role changed)'),
  action: z.string().describe("'<area>.<verb>', e.g. 'role.grant', 'approval.approve', 'dispute.resolve'"),
  target_type: z.string().nullable(),
  target_id: uuid.nullable(),
  reason: z.string().nullable().describe("The operator's reason (null on rows from before reasons were asked for)"),
  facts: z.record(z.string(), z.unknown()).describe('Ids and statuses around the action; no identity number whole'),
  created_at: timestamp,
});

export const adminAuditListResponse = z.array(auditRowResponse);

export type AuditRowResponse = z.infer<typeof auditRowResponse>;
export type AdminRoleRevokeResponse = z.infer<typeof adminRoleRevokeResponse>;
