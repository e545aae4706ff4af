// The account export's document (GET /account-export): everything the service holds about the
// caller, in the shapes the caller's own reads answer where there is one (a transaction as
// transaction-list gives it, a notification as notification-list, a milestone as milestone-list,
// a payout account as payout-list), built by private.account_export
// (supabase/migrations/20261129100000_account_export.sql). Other people appear by their ids only.
import { z } from 'zod';
import { chars, otpCodeSchema } from '../core/validation.ts';
import { count, naira, timestamp, uuid as responseUuid } from '../core/schema.ts';
import { escrowListItemResponse, milestoneResponse } from '../escrow/schema.ts';
import { payoutAccountResponse, transactionResponse } from '../money/schema.ts';
import { notificationResponse } from '../notifications/schema.ts';
import { nextOfKinResponse, profileResponse } from '../profile/schema.ts';
import { DISPUTE_OUTCOMES, DISPUTE_REASON_CODES, DISPUTE_STATUSES, PROPOSAL_STATUSES } from '../disputes/enums.ts';
import { KYC_CHECK_STATUSES, KYC_CHECK_TYPES } from '../kyc/enums.ts';
import { MERCHANT_STATUSES } from '../merchants/enums.ts';
import { OPERATOR_ROLES } from '../operators/enums.ts';
import { WEBHOOK_OWNER_KINDS } from '../webhooks/enums.ts';

const nullableTime = timestamp.nullable();

/** An identity number as the export shows it: 8 asterisks and its last 3 digits, never whole. */
const maskedIdentity = z.string().regex(/^\*{8}[0-9A-Za-z]{1,3}$/);

const accountPart = z.strictObject({
  id: responseUuid,
  phone: z.string(),
  kyc_tier: count,
  created_at: timestamp,
  password_changed_at: timestamp,
  frozen: z.boolean(),
  /** when the account was frozen and unfrozen by operators (their reasons are not part of it) */
  freezes: z.array(z.strictObject({ frozen_at: timestamp, unfrozen_at: nullableTime })),
  operator_roles: z.array(z.strictObject({ role: z.enum(OPERATOR_ROLES), granted_at: timestamp })),
});

const exportEscrow = escrowListItemResponse.omit({ merchant: true }).extend({
  counterparty_phone: z.string().describe(
    'Whole to the initiator, who typed it; to the counterparty masked as escrow-get masks it (+2348*******78)',
  ),
  role: z.enum(['initiator', 'counterparty']).describe("The caller's side of the escrow"),
});

const exportProposal = z.strictObject({
  id: responseUuid,
  proposed_by: responseUuid,
  outcome: z.enum(DISPUTE_OUTCOMES),
  payee_amount: naira.nullable(),
  status: z.enum(PROPOSAL_STATUSES),
  created_at: timestamp,
  responded_at: nullableTime,
});

const exportDispute = z.strictObject({
  id: responseUuid,
  escrow_id: responseUuid,
  raised_by: responseUuid,
  reason_code: z.enum(DISPUTE_REASON_CODES),
  reason: z.string(),
  status: z.enum(DISPUTE_STATUSES),
  outcome: z.enum(DISPUTE_OUTCOMES).nullable(),
  payee_amount: naira.nullable(),
  negotiation_deadline: timestamp,
  auto_release_at: nullableTime,
  withdrawn_at: nullableTime,
  resolution: z.string().nullable(),
  resolved_at: nullableTime,
  created_at: timestamp,
  proposals: z.array(exportProposal),
});

const review = {
  id: responseUuid,
  escrow_id: responseUuid,
  rating: z.int().min(1).max(5),
  feedback: z.string().nullable(),
  created_at: timestamp,
};

export const accountExportResponse = z.strictObject({
  /** the document's version: a field's meaning never changes within one */
  format: z.literal('account-export/1'),
  exported_at: timestamp,
  account: accountPart,
  profile: profileResponse.omit({ next_of_kin: true }).nullable(),
  next_of_kin: nextOfKinResponse.extend({ updated_at: timestamp }).nullable(),
  escrows: z.array(exportEscrow),
  milestones: z.array(milestoneResponse),
  conversations: z.array(z.strictObject({ id: responseUuid, escrow_id: responseUuid, created_at: timestamp })),
  messages: z.array(z.strictObject({
    id: responseUuid,
    conversation_id: responseUuid,
    sender_id: responseUuid,
    message_type: z.string(),
    content: z.string(),
    created_at: timestamp,
  })),
  disputes: z.array(exportDispute),
  reviews_given: z.array(z.strictObject({ ...review, reviewee_id: responseUuid })),
  reviews_received: z.array(z.strictObject({ ...review, reviewer_id: responseUuid })),
  wallet: z.strictObject({ balance: naira, currency: z.literal('NGN') }),
  virtual_account: z.strictObject({
    status: z.string(),
    account_number: z.string().nullable(),
    account_name: z.string().nullable(),
    bank_name: z.string().nullable(),
    provider: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  }).nullable(),
  transactions: z.array(transactionResponse),
  payout_accounts: z.array(payoutAccountResponse),
  cards: z.array(z.strictObject({
    id: responseUuid,
    brand: z.string(),
    last4: z.string().regex(/^[0-9]{4}$/),
    exp_month: z.string(),
    exp_year: z.string(),
    bank: z.string().nullable(),
    is_default: z.boolean(),
    created_at: timestamp,
  })),
  notifications: z.array(notificationResponse),
  kyc: z.strictObject({
    tier: count,
    checks: z.array(z.strictObject({
      type: z.enum(KYC_CHECK_TYPES),
      status: z.enum(KYC_CHECK_STATUSES),
      reject_labels: z.array(z.string()),
      /** a failed check only: false after a FINAL rejection; null otherwise */
      can_retry: z.boolean().nullable(),
      provider: z.string(),
      id_number: maskedIdentity.nullable(),
      passed_at: nullableTime,
      created_at: timestamp,
      updated_at: timestamp,
    })),
    identity_requests: z.array(z.strictObject({
      reference: z.string(),
      type: z.enum(KYC_CHECK_TYPES),
      id_number: maskedIdentity,
      rc_number: maskedIdentity.nullable(),
      provider: z.string(),
      status: z.string(),
      created_at: timestamp,
      completed_at: nullableTime,
    })),
  }),
  /** every session, live or ended: when, never a token */
  sessions: z.array(z.strictObject({
    id: responseUuid,
    created_at: timestamp,
    last_used_at: timestamp,
    expires_at: timestamp,
    revoked_at: nullableTime,
    revoked_reason: z.string().nullable(),
  })),
  merchants: z.array(z.strictObject({
    id: responseUuid,
    name: z.string(),
    status: z.enum(MERCHANT_STATUSES),
    created_at: timestamp,
    /** keys by their prefix only */
    api_keys: z.array(z.strictObject({
      id: responseUuid,
      name: z.string(),
      prefix: z.string(),
      created_at: timestamp,
      last_used_at: nullableTime,
      revoked_at: nullableTime,
    })),
  })),
  /** the caller's own webhook endpoints and their merchants', never a secret */
  webhook_endpoints: z.array(z.strictObject({
    id: responseUuid,
    owner_kind: z.enum(WEBHOOK_OWNER_KINDS),
    owner_id: responseUuid,
    url: z.string(),
    event_types: z.array(z.string()).nullable(),
    enabled: z.boolean(),
    disabled_at: nullableTime,
    created_at: timestamp,
  })),
  /** SMS sent to the caller's phone; a one-time code's text is never included (body null) */
  sms: z.array(z.strictObject({
    id: count,
    kind: z.string().nullable(),
    body: z.string().nullable(),
    created_at: timestamp,
    sent_at: nullableTime,
    withheld: z.string().nullable(),
  })),
  /** events addressed to the caller: facts only (ids, statuses, amounts in kobo) */
  events: z.array(z.strictObject({
    id: count,
    kind: z.string(),
    subject_id: responseUuid,
    escrow_id: responseUuid.nullable(),
    data: z.record(z.string(), z.unknown()),
    occurred_at: timestamp,
  })),
});
export type AccountExportResponse = z.input<typeof accountExportResponse>;

// ---- account-delete ----------------------------------------------------------------------------
/** account-delete: the password and a code from auth-send-otp with the context account_delete. */
export const accountDeleteBody = z.strictObject({
  password: chars(1, 128),
  otp_code: otpCodeSchema,
});

/** account-delete: the account is gone; every token of it is refused from now on. */
export const accountDeletedResponse = z.strictObject({
  deleted: z.literal(true),
  sessions_ended: z.number().int().min(0).describe('How many sessions of the account ended (this one included)'),
});
export type AccountDeletedResponse = z.input<typeof accountDeletedResponse>;
