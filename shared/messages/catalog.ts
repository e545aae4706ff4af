// The catalog of messages: every kind the service records, declared once with its params (facts,
// never words), and for each notification kind the event types it is written with, who receives
// it, the operations and SQL functions that write it, what its entity_id points at and the action
// the client should offer. The sentences are in shared/messages/texts.ts, which reads the kinds from
// here; docs/notifications.md is rendered from it (`npm run docs:notifications`), and
// tests/unit/notification-events.test.ts checks it against every private.notify call in
// supabase/schema.sql (kind, entity type, action label and enclosing function).
//
// Adding a message: docs/architecture.md#messages-what-users-read.

import type { DisputeOutcome, DisputeReasonCode } from '../disputes/enums.ts';
import type { EscrowCategory } from '../escrow/enums.ts';
import type { KycCheckType } from '../kyc/enums.ts';
import type { ActionLabel, EntityType, NotificationEventType } from '../notifications/enums.ts';
import type { OtpContext } from '../auth/enums.ts';

/** An amount in kobo, as the SQL functions record it (a jsonb number). */
export type Kobo = number;

/** What each notification kind says it about, by kind. */
export interface NotificationParams {
  escrow_created: { title: string; amount: Kobo };
  /** The counterparty is invited and pays (as the category's payer). */
  invite_received: { inviter: string | null; title: string; amount: Kobo; category: EscrowCategory };
  /** The counterparty is invited once the initiator's money is in. */
  invite_received_funded: { inviter: string | null; title: string; amount: Kobo };
  funded_payer: { title: string; total_charge: Kobo };
  funded_payee: { title: string; amount: Kobo };
  funding_shortfall: { title: string; received: Kobo; shortfall: Kobo };
  /** The invited payer accepted; their payment is requested. */
  accepted: { accepter: string | null; title: string };
  /** The invited payee accepted a funded escrow. */
  accepted_funded: { accepter: string | null; title: string };
  payment_requested: { title: string; total_charge: Kobo };
  /** An unfunded escrow declined by the counterparty or cancelled. */
  closed_unfunded: { title: string; how: 'declined' | 'cancelled' };
  /** A funded escrow never accepted, declined or cancelled: the money went back. */
  refunded_unaccepted: { title: string; how: 'declined' | 'cancelled'; amount: Kobo };
  refunded: { title: string; amount: Kobo };
  delivered_inspection: { title: string; days: number };
  delivered: { title: string };
  released_payee: { title: string; amount: Kobo; to: 'wallet' | 'bank' };
  released_payer: { title: string; automatic: boolean };
  milestones_released_payee: { title: string; amount: Kobo };
  milestones_released_payer: { title: string };
  payout_succeeded: { amount: Kobo };
  payout_failed: { amount: Kobo };
  milestone_proposed: { milestone: string; amount: Kobo; title: string };
  milestone_updated: { milestone: string; title: string };
  milestone_accepted: { milestone: string };
  milestone_completed: { milestone: string; amount: Kobo };
  milestone_released: { milestone: string };
  /** The other party reviewed the reviewee (a rating from 1 to 5). */
  review_received: { reviewer: string | null; title: string; rating: number };
  dispute_raised: { title: string; reason_code: DisputeReasonCode; by_payer: boolean };
  /** The other party proposed a settlement (payee_amount: a split's share for the payee, else null). */
  dispute_proposal: { title: string; outcome: DisputeOutcome; payee_amount: Kobo | null };
  dispute_proposal_rejected: { title: string; outcome: DisputeOutcome };
  dispute_withdrawn: { title: string };
  /** 24 hours before the negotiation deadline (auto_release: the money then goes to the payee). */
  dispute_deadline_soon: { title: string; auto_release: boolean };
  dispute_escalated: { title: string };
  /** Settled; amount: what this party received (0 when nothing). */
  dispute_resolved: { title: string; outcome: DisputeOutcome; amount: Kobo; by_admin: boolean };
  /** The account's KYC tier rose (docs/kyc.md#notifications); no escrow. */
  kyc_tier_raised: { tier: number };
  /** A FINAL rejection withdrew a passed check and the tier fell. */
  kyc_tier_lowered: { tier: number };
  /** A check failed; can_retry: RETRY (the user may try again), else FINAL. */
  verification_failed: { check_type: KycCheckType; can_retry: boolean };
  /** Money arrived (a bank transfer, a release) above the tier's balance limit: credited, verify to hold more. */
  verification_needed: { tier: number; balance: Kobo; limit: Kobo };
  /**
   * Money arrived (a release, a settlement, a bank transfer) while the account's tier moves none:
   * credited and held; tier: the tier that lets it out.
   */
  verify_to_move_money: { tier: number; balance: Kobo };
  /**
   * A payout to the bank (of a release, a milestone, a settlement) held by the payee's single or
   * daily limit: the amount stays in the wallet; tier: the lowest tier that would let it out
   * (null: none does).
   */
  verify_to_pay_out: { amount: Kobo; kyc_limit: 'single' | 'daily'; limit: Kobo; tier: number | null };
  /**
   * A merchant opened an escrow with this person as its payer (the buyer) or payee (the seller): the
   * merchant's name and nothing else the merchant wrote.
   */
  merchant_escrow: { merchant: string; side: 'payer' | 'payee'; category: EscrowCategory; amount: Kobo };
}

export interface SmsParams {
  /** An invite at creation: the counterparty pays (the category's payer). */
  escrow_invite: { inviter: string | null; category: EscrowCategory; amount: Kobo };
  /** An invite once the initiator's money is in: the counterparty is paid (the payee). */
  escrow_invite_funded: { inviter: string | null; category: EscrowCategory; amount: Kobo };
  funding_shortfall: { received: Kobo; category: EscrowCategory; total_charge: Kobo; shortfall: Kobo };
  /**
   * A one-time code. Rendered when it is queued (shared/auth/otp.ts), so the code is stored only
   * in the outbox row's body, as it always was; the row's message keeps the kind and the context.
   */
  otp_code: { context: OtpContext; code: string; minutes: number };
  /** Sign-up asked for a phone that already has an account: a notice, no code. */
  account_exists: Record<never, never>;
  /** A dispute was settled; amount: what this person received. */
  dispute_settled: { outcome: DisputeOutcome; amount: Kobo };
  /** The account's KYC tier changed (raised or lowered). */
  kyc_tier_changed: { tier: number; raised: boolean };
  /** Money arrived (a bank transfer, a release) above the tier's balance limit. */
  verification_needed: { tier: number; limit: Kobo };
  /** Money arrived while the account's tier moves none; tier: the tier that lets it out. */
  verify_to_move_money: { tier: number; balance: Kobo };
  /** A payout held by the payee's single or daily limit; tier: the tier that lifts it (null: none). */
  verify_to_pay_out: { amount: Kobo; kyc_limit: 'single' | 'daily'; limit: Kobo; tier: number | null };
  /**
   * A merchant opened an escrow with this person as its payer (the buyer) or payee (the seller):
   * the merchant's name and nothing else the merchant wrote, and no link.
   */
  merchant_escrow: { merchant: string; side: 'payer' | 'payee'; category: EscrowCategory; amount: Kobo };
}

export interface TransactionParams {
  escrow_funding: { title: string };
  payment_request: { title: string };
  refund_unaccepted: { title: string; how: 'declined' | 'cancelled' };
  refund: { title: string };
  /** on a merchant escrow, the merchant's name and its fee share taken from this release */
  escrow_release: { title: string; merchant?: string; merchant_fee?: Kobo };
  milestone_release: { milestone: string; merchant?: string; merchant_fee?: Kobo };
  /** the merchant's fee credited to its wallet (a merchant's transaction) */
  merchant_fee: { title: string; merchant: string };
  escrow_payout: { title: string; bank_name: string; account_last4: string };
  wallet_topup: Record<never, never>;
  wallet_topup_saved_card: Record<never, never>;
  virtual_account_deposit: Record<never, never>;
  withdrawal: { bank_name: string; account_last4: string };
  /** a withdrawal of the merchant's wallet to its owner's account (a merchant's transaction) */
  merchant_withdrawal: { merchant: string; bank_name: string; account_last4: string };
}

export type NotificationKind = keyof NotificationParams;
export type SmsKind = keyof SmsParams;
export type TransactionKind = keyof TransactionParams;

type MessageOf<P> = { [K in keyof P]: { kind: K } & P[K] }[keyof P];
/** A notification's message as stored in public.notifications.message. */
export type NotificationMessage = MessageOf<NotificationParams>;
/** An SMS as stored in private.sms_outbox.message (otp_code: without its code). */
export type SmsMessage = MessageOf<SmsParams>;
/** A transaction's message as stored in public.transactions.message. */
export type TransactionMessage = MessageOf<TransactionParams>;

const SMS_KIND_LIST = {
  escrow_invite: true,
  escrow_invite_funded: true,
  funding_shortfall: true,
  otp_code: true,
  account_exists: true,
  dispute_settled: true,
  kyc_tier_changed: true,
  verification_needed: true,
  verify_to_move_money: true,
  verify_to_pay_out: true,
  merchant_escrow: true,
} as const satisfies { [K in SmsKind]: true };
export const SMS_KINDS = Object.keys(SMS_KIND_LIST) as SmsKind[];

const TRANSACTION_KIND_LIST = {
  escrow_funding: true,
  payment_request: true,
  refund_unaccepted: true,
  refund: true,
  escrow_release: true,
  milestone_release: true,
  escrow_payout: true,
  wallet_topup: true,
  wallet_topup_saved_card: true,
  virtual_account_deposit: true,
  withdrawal: true,
  merchant_fee: true,
  merchant_withdrawal: true,
} as const satisfies { [K in TransactionKind]: true };
export const TRANSACTION_KINDS = Object.keys(TRANSACTION_KIND_LIST) as TransactionKind[];

// ---- notifications: events, recipients, writers, entity and action ----------------------------

export interface NotificationSpec {
  /** The event types this kind is written with (more than one when the caller names it). */
  readonly events: readonly NotificationEventType[];
  /** Who receives it. */
  readonly to: string;
  /**
   * The API operations (endpoints, the job, the payments webhook) whose transaction writes it; per
   * event type when the kind is written with several.
   */
  readonly operations: readonly string[] | { readonly [E in NotificationEventType]?: readonly string[] };
  /** The SQL functions that write it (checked against supabase/schema.sql). */
  readonly sql: readonly string[];
  /** What entity_id points at. */
  readonly entity_type: EntityType;
  /** The action offered (null: none); more than one when it depends on the state. */
  readonly action_labels: readonly (ActionLabel | null)[];
}

/** What a client calls when the user taps an action label (the notification's entity in hand). */
export const ACTION_OPERATIONS: Record<ActionLabel, { operation: string; how: string }> = {
  'View escrow': { operation: 'escrow-get', how: "escrow_id = the notification's escrow_id" },
  'Review invitation': {
    operation: 'escrow-get',
    how: 'shows the terms; then escrow-accept or escrow-decline with the escrow_id',
  },
  'Fund escrow': { operation: 'escrow-fund', how: "escrow_id = the notification's escrow_id" },
  'Inspect delivery': {
    operation: 'escrow-get',
    how: 'shows the inspection deadline (inspection_ends_at); then escrow-release when satisfied',
  },
  'Release funds': { operation: 'escrow-release', how: "escrow_id = the notification's escrow_id" },
  'Leave a review': { operation: 'review-submit', how: "escrow_id = the notification's escrow_id, a rating 1-5" },
  'View transaction': {
    operation: 'transaction-list',
    how: "escrow_id = the notification's escrow_id; the transaction is the entity_id",
  },
  'Review milestone': {
    operation: 'milestone-list',
    how: "escrow_id = the notification's escrow_id; then milestone-approve with the entity_id",
  },
  'View milestone': { operation: 'milestone-list', how: "escrow_id = the notification's escrow_id" },
  'Release milestone': { operation: 'milestone-release', how: 'milestone_id = the entity_id' },
  'View dispute': { operation: 'dispute-get', how: "escrow_id = the notification's escrow_id" },
  'Respond to proposal': {
    operation: 'dispute-get',
    how: 'shows the open proposals; then dispute-respond with the escrow_id, the proposal_id and accept',
  },
  'Verify identity': {
    operation: 'kyc-status',
    how: 'shows the tier, its limits and what the next tier needs; then kyc-start or identity-verify',
  },
};

export const NOTIFICATIONS = {
  merchant_escrow: {
    events: ['escrow_created'],
    to: "both parties of a merchant's escrow (a placeholder's waits for its sign-up)",
    operations: ['merchant-escrow-create'],
    sql: ['private.merchant_escrow_create'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  escrow_created: {
    events: ['escrow_created'],
    to: 'the initiator',
    operations: ['escrow-create'],
    sql: ['private.escrow_create'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  invite_received: {
    events: ['invite_received'],
    to: 'the counterparty (once they have an account), when they are asked to pay',
    operations: ['escrow-create'],
    sql: ['private.escrow_create'],
    entity_type: 'escrow',
    action_labels: ['Review invitation'],
  },
  invite_received_funded: {
    events: ['invite_received'],
    to: 'the counterparty, when the initiator has paid',
    operations: ['escrow-fund', 'webhook-payments'],
    sql: ['private.escrow_mark_funded'],
    entity_type: 'escrow',
    action_labels: ['Review invitation'],
  },
  funded_payer: {
    events: ['funded'],
    to: 'the payer',
    operations: ['escrow-fund', 'webhook-payments'],
    sql: ['private.escrow_mark_funded'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  funded_payee: {
    events: ['funded'],
    to: 'the payee, when the escrow was already accepted',
    operations: ['escrow-fund', 'webhook-payments'],
    sql: ['private.escrow_mark_funded'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  funding_shortfall: {
    events: ['funding_shortfall'],
    to: 'the payer, when a bank transfer covered only part of the charge',
    operations: ['webhook-payments'],
    sql: ['private.bank_transfer_received'],
    entity_type: 'escrow',
    action_labels: ['Fund escrow'],
  },
  accepted: {
    events: ['active'],
    to: 'the initiator, when the counterparty accepted an escrow not yet funded',
    operations: ['escrow-accept'],
    sql: ['private.escrow_accept'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  accepted_funded: {
    events: ['active'],
    to: 'the initiator, when the counterparty accepted an escrow the initiator funded',
    operations: ['escrow-accept'],
    sql: ['private.escrow_accept'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  payment_requested: {
    events: ['payment_requested'],
    to: 'the counterparty who accepted and pays; the entity is the pending funding transaction',
    operations: ['escrow-accept'],
    sql: ['private.escrow_accept'],
    entity_type: 'transaction',
    action_labels: ['Fund escrow'],
  },
  closed_unfunded: {
    events: ['declined', 'cancelled'],
    to: 'both parties, when an escrow without money is declined or cancelled',
    operations: { declined: ['escrow-decline'], cancelled: ['escrow-cancel'] },
    sql: ['private.escrow_close_unfunded'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  refunded_unaccepted: {
    events: ['declined', 'cancelled'],
    to: 'both parties, when an escrow the initiator funded is declined or cancelled before acceptance',
    operations: { declined: ['escrow-decline'], cancelled: ['escrow-cancel'] },
    sql: ['private.escrow_refund_unaccepted'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  refunded: {
    events: ['refunded'],
    to: 'both parties',
    operations: ['escrow-refund'],
    sql: ['private.escrow_refund'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  delivered_inspection: {
    events: ['delivered'],
    to: 'the payer, when the delivery opens an inspection period',
    operations: ['escrow-deliver'],
    sql: ['private.escrow_deliver'],
    entity_type: 'escrow',
    action_labels: ['Inspect delivery'],
  },
  delivered: {
    events: ['delivered'],
    to: 'the payer, when the category has no inspection period',
    operations: ['escrow-deliver'],
    sql: ['private.escrow_deliver'],
    entity_type: 'escrow',
    action_labels: ['Release funds'],
  },
  released_payee: {
    events: ['released'],
    to: 'the payee',
    operations: ['escrow-release', 'jobs-run'],
    sql: ['private.escrow_release'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  released_payer: {
    events: ['released'],
    to: 'the payer',
    operations: ['escrow-release', 'jobs-run'],
    sql: ['private.escrow_release'],
    entity_type: 'escrow',
    action_labels: ['Leave a review'],
  },
  milestones_released_payee: {
    events: ['released'],
    to: 'the payee, when the last milestone released the whole amount',
    operations: ['milestone-release'],
    sql: ['private.milestone_release'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  milestones_released_payer: {
    events: ['released'],
    to: 'the payer, when the last milestone released the whole amount',
    operations: ['milestone-release'],
    sql: ['private.milestone_release'],
    entity_type: 'escrow',
    action_labels: ['Leave a review'],
  },
  payout_succeeded: {
    events: ['payout_succeeded'],
    to: 'the payee whose release was paid out to their bank',
    operations: ['webhook-payments', 'jobs-run'],
    sql: ['private.escrow_payout_settled'],
    entity_type: 'transaction',
    action_labels: ['View transaction'],
  },
  payout_failed: {
    events: ['payout_failed'],
    to: 'the payee whose payout failed (the money is back in their wallet)',
    operations: ['webhook-payments', 'jobs-run'],
    sql: ['private.escrow_payout_settled'],
    entity_type: 'transaction',
    action_labels: ['View transaction'],
  },
  milestone_proposed: {
    events: ['milestone_proposed'],
    to: 'the other party',
    operations: ['milestone-create'],
    sql: ['private.milestone_create'],
    entity_type: 'milestone',
    action_labels: ['Review milestone'],
  },
  milestone_updated: {
    events: ['milestone_updated'],
    to: 'the other party',
    operations: ['milestone-update'],
    sql: ['private.milestone_update'],
    entity_type: 'milestone',
    action_labels: ['Review milestone'],
  },
  milestone_accepted: {
    events: ['milestone_accepted'],
    to: 'both parties, when the second approval makes it accepted',
    operations: ['milestone-approve'],
    sql: ['private.milestone_approve'],
    entity_type: 'milestone',
    action_labels: ['View milestone'],
  },
  milestone_completed: {
    events: ['milestone_completed'],
    to: 'the payer',
    operations: ['milestone-complete'],
    sql: ['private.milestone_complete'],
    entity_type: 'milestone',
    action_labels: ['Release milestone'],
  },
  milestone_released: {
    events: ['milestone_released'],
    to: 'the payee',
    operations: ['milestone-release'],
    sql: ['private.milestone_release'],
    entity_type: 'milestone',
    action_labels: ['View milestone'],
  },
  review_received: {
    events: ['review_received'],
    to: 'the party who was reviewed',
    operations: ['review-submit'],
    sql: ['private.review_submit'],
    entity_type: 'review',
    // "Leave a review" while they have not reviewed the other party yet
    action_labels: ['Leave a review', null],
  },
  dispute_raised: {
    events: ['dispute_raised'],
    to: 'both parties',
    operations: ['dispute-raise'],
    sql: ['private.dispute_raise'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_proposal: {
    events: ['dispute_proposal'],
    to: 'the other party than the proposer',
    operations: ['dispute-propose'],
    sql: ['private.dispute_propose'],
    entity_type: 'dispute',
    action_labels: ['Respond to proposal'],
  },
  dispute_proposal_rejected: {
    events: ['dispute_proposal_rejected'],
    to: 'the proposer',
    operations: ['dispute-respond'],
    sql: ['private.dispute_respond'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_withdrawn: {
    events: ['dispute_withdrawn'],
    to: 'both parties',
    operations: ['dispute-withdraw'],
    sql: ['private.dispute_withdraw'],
    entity_type: 'dispute',
    action_labels: ['View escrow'],
  },
  dispute_deadline_soon: {
    events: ['dispute_deadline_soon'],
    to: 'both parties, 24 hours before the negotiation deadline',
    operations: ['jobs-run'],
    sql: ['private.run_dispute_jobs'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_escalated: {
    events: ['dispute_escalated'],
    to: 'both parties, at the deadline without a settlement',
    operations: ['jobs-run'],
    sql: ['private.run_dispute_jobs'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_resolved: {
    events: ['dispute_resolved'],
    to: 'both parties, each with what they received (also by SMS)',
    operations: ['dispute-respond', 'admin-dispute-resolve', 'jobs-run'],
    sql: ['private.dispute_settle'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  kyc_tier_raised: {
    events: ['kyc_tier_changed'],
    to: 'the user, when a passed check completes a higher tier (also by SMS); no escrow',
    operations: ['webhook-kyc', 'webhook-identity'],
    sql: ['private.kyc_record'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  kyc_tier_lowered: {
    events: ['kyc_tier_changed'],
    to: 'the user, when a FINAL rejection withdraws a passed check (also by SMS); no escrow',
    operations: ['webhook-kyc', 'webhook-identity'],
    sql: ['private.kyc_record'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  verification_failed: {
    events: ['verification_failed'],
    to: 'the user, when a check fails (and whether it may be tried again); no escrow',
    operations: ['webhook-kyc', 'webhook-identity'],
    sql: ['private.kyc_record'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  verification_needed: {
    events: ['verification_needed'],
    to:
      "the user, when a bank transfer, or a release or settlement that started no payout, took the wallet above the tier's balance limit (also by SMS; once a day); no escrow",
    operations: [
      'webhook-payments',
      'escrow-release',
      'milestone-release',
      'dispute-respond',
      'admin-dispute-resolve',
      'jobs-run',
    ],
    sql: ['private.kyc_balance_notice'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  verify_to_move_money: {
    events: ['verification_needed'],
    to:
      'the user at a tier that moves no money, when a release, a settlement or a bank transfer was credited to the wallet and held: the tier that lets it out (also by SMS; once a day); no escrow',
    operations: [
      'escrow-release',
      'milestone-release',
      'dispute-respond',
      'admin-dispute-resolve',
      'jobs-run',
      'webhook-payments',
    ],
    sql: ['private.kyc_balance_notice'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  verify_to_pay_out: {
    events: ['verification_needed'],
    to:
      "the payee, when the payout to their bank of a release, a milestone or a settlement would pass their tier's single or daily limit: the money stays in the wallet, and the tier that lifts the limit (also by SMS; once a day with the other verification notices); no escrow",
    operations: ['escrow-release', 'milestone-release', 'dispute-respond', 'admin-dispute-resolve', 'jobs-run'],
    sql: ['private.kyc_payout_notice'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
} as const satisfies { [K in NotificationKind]: NotificationSpec };

/**
 * The notification event types each kind is written with (public.notifications.event_type): the
 * kinds are the sentences, the event types what the client app acts on. Taken from NOTIFICATIONS above;
 * their union is the list of event types the service writes.
 */
export const NOTIFICATION_KIND_EVENTS: { readonly [K in NotificationKind]: readonly NotificationEventType[] } = Object
  .fromEntries(
    Object.entries(NOTIFICATIONS).map(([kind, spec]) => [kind, spec.events]),
  ) as unknown as { [K in NotificationKind]: readonly NotificationEventType[] };

export const NOTIFICATION_KINDS = Object.keys(NOTIFICATION_KIND_EVENTS) as NotificationKind[];
/** Every event type a notification is written with, in the order of the kinds above. */
export const NOTIFICATION_EVENT_TYPES_WRITTEN = [...new Set(Object.values(NOTIFICATION_KIND_EVENTS).flat())];
