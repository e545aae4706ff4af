// Request and response schemas of the operators area: the second factor (admin-totp-enrol,
// admin-totp-verify), the reason every action takes, four eyes (approvals) and the reads
// (admin-search, admin-user-get, admin-escrow-get, admin-queue-list).
import { z } from 'zod';
import { count, e164Phone, naira, timestamp, uuid } from '../core/schema.ts';
import { queryInt, text, uuidSchema } from '../core/validation.ts';
import { ESCROW_CATEGORIES, ESCROW_STATUSES, MILESTONE_STATUSES } from '../escrow/enums.ts';
import { DISPUTE_OUTCOMES, DISPUTE_STATUSES, PROPOSAL_STATUSES } from '../disputes/enums.ts';
import { MERCHANT_STATUSES } from '../merchants/enums.ts';
import { KYC_CHECK_STATUSES, KYC_CHECK_TYPES } from '../kyc/enums.ts';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../money/enums.ts';
import { SMS_KINDS } from '../messages/catalog.ts';
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
  roles: z.array(z.enum(OPERATOR_ROLES)).min(1).describe(
    "The operator's roles now, so that a client shows only the actions they admit (each endpoint still checks)",
  ),
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
// ---- reads: admin-search, admin-user-get, admin-escrow-get, admin-queue-list ------------------

/** The queues of admin-queue-list, in the order it answers them (docs/operators.md#queues). */
export const OPERATOR_QUEUES = [
  'disputes_negotiation',
  'disputes_escalated',
  'charges_held',
  'payouts_failed',
  'webhooks_failed',
  'identity_flags',
  'deactivations_failed',
] as const;
export type OperatorQueue = (typeof OPERATOR_QUEUES)[number];

export const adminSearchQuery = z.strictObject({
  q: text(1, 100).meta({
    description: 'A phone (0803... or +234803..., exact), a user id, an escrow id, or a payment or transfer ' +
      'reference (a transaction id, or the reference the provider gave it)',
    examples: ['08031234567'],
  }),
});

const readReason = operatorReason.optional().meta({
  description: 'Why you look (10-500 characters), kept in the audit with the read',
  examples: ['The user called about a payout that did not arrive'],
});

export const adminUserGetQuery = z.strictObject({ user_id: uuidSchema, reason: readReason });

export const adminEscrowGetQuery = z.strictObject({
  escrow_id: uuidSchema,
  reason: readReason.meta({
    description: "Why you look (10-500 characters), kept in the audit; with one, the escrow's messages are shown " +
      'even without an open dispute',
    examples: ['The payer reports the seller asked to be paid outside the escrow'],
  }),
});

/** A user's phone as operators see it: gone once the account is deleted (never its keyed hash). */
const userPhone = e164Phone.nullable().describe('null once the account is deleted (its phone is erased)');
/** When the account was deleted (account-delete); its names are then shown as Deleted user. */
const deletedAt = timestamp.nullable().describe('When the account was deleted; null for a live account');

const userFound = z.strictObject({
  id: uuid,
  phone: userPhone,
  first_name: z.string(),
  last_name: z.string(),
  kyc_tier: count,
  frozen: z.boolean(),
  created_at: timestamp,
  deleted_at: deletedAt,
});

const escrowFound = z.strictObject({
  id: uuid,
  status: z.enum(ESCROW_STATUSES),
  amount: naira,
  payer_id: uuid.nullable().describe('null while the paying counterparty has no account'),
  payee_id: uuid.nullable().describe('null while the paid counterparty has no account'),
  created_at: timestamp,
});

export const adminSearchResponse = z.strictObject({
  users: z.array(userFound).describe('At most 20'),
  escrows: z.array(escrowFound).describe('At most 20'),
});

/** An SMS's state in the outbox, as admin-user-get answers it. */
export const SMS_STATUSES = ['queued', 'sent', 'failed', 'expired', 'withheld'] as const;

/** An identity number as operators see it: its last 3 digits after 8 asterisks, never whole. */
const maskedNumber = z.string().regex(/^\*{8}[0-9A-Za-z]{1,3}$/).nullable();

export const adminUserGetResponse = z.strictObject({
  profile: z.strictObject({
    id: uuid,
    phone: userPhone,
    first_name: z.string(),
    last_name: z.string(),
    kyc_tier: count,
    created_at: timestamp,
    deleted_at: deletedAt,
  }),
  kyc_checks: z.array(z.strictObject({
    type: z.enum(KYC_CHECK_TYPES),
    status: z.enum(KYC_CHECK_STATUSES),
    id_number: maskedNumber.describe('The number checked, masked (last 3 digits); null when none was kept'),
    updated_at: timestamp,
  })),
  wallet: z.strictObject({
    balance: naira.describe("The wallet's balance"),
    in_escrow: naira.describe('What is held in escrows this user pays'),
    pending_payouts: naira.describe('Withdrawals and escrow payouts sent and not yet settled'),
  }),
  frozen: z.strictObject({
    since: timestamp,
    reason: z.string().describe("The freezing operator's reason"),
    frozen_by: uuid,
  }).nullable(),
  active_sessions: count,
  operator_roles: z.array(z.enum(OPERATOR_ROLES)),
  merchants: z.array(z.strictObject({ id: uuid, name: z.string(), status: z.enum(MERCHANT_STATUSES) })),
  payout_accounts: z.array(z.strictObject({
    id: uuid,
    bank_name: z.string(),
    account_number: z.string().regex(/^\*+[0-9]{4}$/).describe('Masked: the last 4 digits'),
    is_default: z.boolean(),
    verified: z.boolean(),
  })),
  cards: z.array(z.strictObject({ id: uuid, brand: z.string(), last4: z.string(), is_default: z.boolean() })),
  escrows: z.array(z.strictObject({
    id: uuid,
    status: z.enum(ESCROW_STATUSES),
    role: z.enum(['payer', 'payee']),
    amount: naira,
    created_at: timestamp,
  })).describe('The 20 latest'),
  transactions: z.array(z.strictObject({
    id: uuid.describe('Also the reference the provider was given for a payment or transfer this service started'),
    kind: z.enum(TRANSACTION_TYPES),
    status: z.enum(TRANSACTION_STATUSES),
    amount: naira,
    reference: z.string().nullable().describe("The provider's own reference (charge, transfer or refund), if any"),
    held_for_review: z.boolean().describe('A charge held for an operator (metadata.review)'),
    review: z.strictObject({
      reason: z.string().describe("Why it was held: e.g. 'amount_mismatch'"),
      expected_amount: naira.nullable().describe('What the service expected the provider to take'),
      received_amount: naira.nullable().describe('What the provider reported taking, when it said'),
    }).nullable().describe('Why a charge was held for review and the two figures that disagreed; null when none'),
    merchant_id: uuid.nullable(),
    created_at: timestamp,
  })).describe('The 20 latest'),
  open_disputes: z.array(z.strictObject({
    id: uuid,
    escrow_id: uuid,
    status: z.enum(DISPUTE_STATUSES),
    created_at: timestamp,
  })),
  sms: z.array(z.strictObject({
    id: z.int().describe('The id in the SMS outbox: what admin-sms-resend takes'),
    kind: z.enum(SMS_KINDS).describe('What the message is about (otp_code: a one-time code, never resent)'),
    status: z.enum(SMS_STATUSES).describe(
      'queued (not sent yet, or retried after a failure), sent (handed to the SMS provider), failed (5 tries ' +
        'failed), expired (a one-time code not sent in time), withheld (never sent on purpose: see withheld)',
    ),
    withheld: z.string().nullable().describe('Why it is never sent (no_account, invite_daily_cap); else null'),
    resend_of: z.int().nullable().describe("The first message, when this one is an operator's resend of it"),
    resends: count.describe('How many times the first message was resent (3 at most)'),
    created_at: timestamp,
    sent_at: timestamp.nullable(),
  })).describe("The 20 latest messages of the SMS outbox to the user's phone, newest first; never their text"),
});

export type SmsStatus = (typeof SMS_STATUSES)[number];

const party = z.strictObject({ id: uuid, first_name: z.string(), last_name: z.string(), deleted_at: deletedAt })
  .nullable();

export const adminEscrowGetResponse = z.strictObject({
  escrow: z.strictObject({
    id: uuid,
    status: z.enum(ESCROW_STATUSES),
    category: z.enum(ESCROW_CATEGORIES),
    title: z.string(),
    amount: naira,
    payer_fee: naira,
    vat: naira,
    total_charge: naira,
    seller_fee: naira,
    seller_payout: naira,
    released_amount: naira,
    held: naira.describe("What the escrow's hold holds now"),
    merchant_id: uuid.nullable(),
    created_at: timestamp,
  }),
  payer: party,
  payee: party,
  milestones: z.array(z.strictObject({
    id: uuid,
    index: count,
    title: z.string(),
    amount: naira,
    status: z.enum(MILESTONE_STATUSES),
  })),
  events: z.array(z.strictObject({
    id: z.string().describe('The event log id (ascending)'),
    kind: z.enum(['message', 'notification', 'escrow', 'wallet']),
    subject_id: uuid,
    status: z.string().nullable().describe("An escrow event's status"),
    occurred_at: timestamp,
  })).describe('The event log of the escrow, oldest first'),
  transfers: z.array(z.strictObject({
    id: uuid,
    kind: z.string(),
    transaction_id: uuid.nullable(),
    hold_change: z.number().describe("What the transfer put into (+) or took out of (-) the escrow's hold, naira"),
    entries: z.array(z.strictObject({
      account: z.string().describe('The account kind: escrow_hold, user_wallet, platform_fees, ...'),
      owner_id: uuid.nullable(),
      amount: z.number().describe('Signed, naira; the entries of a transfer sum to 0'),
    })),
    created_at: timestamp,
  })).describe("The ledger transfers that touched the escrow's hold, oldest first"),
  payouts: z.array(z.strictObject({
    id: uuid,
    user_id: uuid,
    status: z.enum(TRANSACTION_STATUSES),
    amount: naira,
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })).describe('Escrow payouts started for it'),
  dispute: z.strictObject({
    id: uuid,
    status: z.enum(DISPUTE_STATUSES),
    reason_code: z.string(),
    reason: z.string().nullable().describe("The raiser's words: only when content is shown"),
    raised_by: uuid,
    outcome: z.enum(DISPUTE_OUTCOMES).nullable(),
    payee_amount: naira.nullable(),
    created_at: timestamp,
    escalated_at: timestamp.nullable(),
    resolved_at: timestamp.nullable(),
    proposals: z.array(z.strictObject({
      id: uuid,
      proposed_by: uuid,
      outcome: z.enum(DISPUTE_OUTCOMES),
      payee_amount: naira.nullable(),
      status: z.enum(PROPOSAL_STATUSES),
      created_at: timestamp,
    })),
  }).nullable().describe('The latest dispute, with every proposal'),
  messages: z.strictObject({
    count,
    content_shown: z.boolean().describe('true with an open dispute or a stated reason'),
    items: z.array(z.strictObject({ id: uuid, sender_id: uuid, content: z.string(), created_at: timestamp }))
      .nullable().describe('null unless content_shown'),
  }),
});

export const adminQueueListResponse = z.array(z.strictObject({
  queue: z.enum(OPERATOR_QUEUES),
  count,
  oldest_at: timestamp.nullable(),
  oldest_age_seconds: count.nullable(),
}));

export type AdminSearchResponse = z.input<typeof adminSearchResponse>;
export type AdminUserGetResponse = z.input<typeof adminUserGetResponse>;
export type AdminEscrowGetResponse = z.input<typeof adminEscrowGetResponse>;
export type AdminQueueListResponse = z.input<typeof adminQueueListResponse>;

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
  'credited_to_suspense',
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
      "credited_to_wallet: an escrow charge that could not fund its escrow, in the payer's wallet; credited_to_suspense: the same " +
      'for a payer who deleted the account, in the suspense account and flagged; refund_due: a ' +
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
