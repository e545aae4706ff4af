// Every sentence a user reads from us, in one place: notification content, SMS bodies and
// transaction descriptions (docs/architecture.md, "Messages").
//
// The SQL functions record what happened, never a sentence: a message, stored as jsonb
// `{"kind": ..., ...params}` in public.notifications.message, private.sms_outbox.message and
// public.transactions.message. This module turns a message into text: a notification's `content`
// and a transaction's `description` when they are read, an SMS body when it is dispatched (the
// outbox then keeps the body it sent). Params are facts: titles and names as stored (SMS names
// already made safe by private.sms_first_name, null when nothing safe is left), amounts in kobo,
// days, codes (category, how an escrow closed, where a payout went); never words.
//
// Adding a message: its kind and params below (the type), its text in every language's table
// (the compiler refuses a missing one), the SQL that records it, and a sample in
// tests/integration/messages.test.ts; a notification kind also its entry in
// shared/messages/catalog.ts (events, recipients, operations, entity and action). A second language is a second `Language` object in
// LANGUAGES; only English exists today.

import type {
  DisputeOutcome,
  DisputeReasonCode,
  EscrowCategory,
  KycCheckType,
  NotificationEventType,
  OtpContext,
} from '../core/enums.ts';
import { NOTIFICATIONS } from './catalog.ts';

/** An amount in kobo, as the SQL functions record it (a jsonb number). */
type Kobo = number;

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
  /** The account's KYC tier rose (DESIGN §8.4); no escrow. */
  kyc_tier_raised: { tier: number };
  /** A FINAL rejection withdrew a passed check and the tier fell. */
  kyc_tier_lowered: { tier: number };
  /** A check failed; can_retry: RETRY (the user may try again), else FINAL. */
  verification_failed: { check_type: KycCheckType; can_retry: boolean };
  /** A bank transfer took the wallet above the tier's balance limit: credited, verify to hold more. */
  verification_needed: { tier: number; balance: Kobo; limit: Kobo };
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
  /** A bank transfer took the wallet above the tier's balance limit. */
  verification_needed: { tier: number; limit: Kobo };
}

export interface TransactionParams {
  escrow_funding: { title: string };
  payment_request: { title: string };
  refund_unaccepted: { title: string; how: 'declined' | 'cancelled' };
  refund: { title: string };
  escrow_release: { title: string };
  milestone_release: { milestone: string };
  escrow_payout: { title: string; bank_name: string; account_last4: string };
  wallet_topup: Record<never, never>;
  wallet_topup_saved_card: Record<never, never>;
  virtual_account_deposit: Record<never, never>;
  withdrawal: { bank_name: string; account_last4: string };
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

/**
 * The notification event types each kind is written with (public.notifications.event_type): the
 * kinds are the sentences, the event types what the client app acts on. Taken from the catalog of
 * shared/messages/catalog.ts; their union is the list of event types the service writes.
 */
export const NOTIFICATION_KIND_EVENTS: { readonly [K in NotificationKind]: readonly NotificationEventType[] } = Object
  .fromEntries(
    Object.entries(NOTIFICATIONS).map(([kind, spec]) => [kind, spec.events]),
  ) as unknown as { [K in NotificationKind]: readonly NotificationEventType[] };

export const NOTIFICATION_KINDS = Object.keys(NOTIFICATION_KIND_EVENTS) as NotificationKind[];
/** Every event type a notification is written with, in the order of the kinds above. */
export const NOTIFICATION_EVENT_TYPES_WRITTEN = [...new Set(Object.values(NOTIFICATION_KIND_EVENTS).flat())];

const SMS_KIND_LIST = {
  escrow_invite: true,
  escrow_invite_funded: true,
  funding_shortfall: true,
  otp_code: true,
  account_exists: true,
  dispute_settled: true,
  kyc_tier_changed: true,
  verification_needed: true,
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
} as const satisfies { [K in TransactionKind]: true };
export const TRANSACTION_KINDS = Object.keys(TRANSACTION_KIND_LIST) as TransactionKind[];

// ---- languages --------------------------------------------------------------------------------

type Templates<P> = { [K in keyof P]: (p: P[K]) => string };

/** One language: how it writes an amount, its words for categories and roles, and every message. */
export interface Language {
  naira: (kobo: Kobo | bigint | string) => string;
  notification: Templates<NotificationParams>;
  sms: Templates<SmsParams>;
  transaction: Templates<TransactionParams>;
}

/**
 * An amount in kobo as people read it, exactly as SQL's private.naira() writes it
 * (`'NGN ' || to_char(kobo / 100.0, 'FM999,999,999,990.00')`): thousands separated by commas,
 * always two decimals, a leading minus when negative; beyond the twelve integer digits the
 * pattern has room for, to_char writes every digit as '#', and so does this.
 */
export function nairaEn(kobo: Kobo | bigint | string): string {
  const k = BigInt(kobo);
  const abs = k < 0n ? -k : k;
  const whole = (abs / 100n).toString();
  const cents = (abs % 100n).toString().padStart(2, '0');
  const sign = k < 0n ? '-' : '';
  if (whole.length > 12) return `NGN ${sign}###,###,###,###.##`;
  return `NGN ${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}

/** The words an SMS uses for a category. */
const CATEGORY_WORD_EN: Record<EscrowCategory, string> = {
  goods_products: 'goods',
  hiring: 'hiring',
  auto_dealership: 'vehicle',
  p2p_crypto: 'crypto',
};

/** The parties' names in each category: the payer and the payee (as private.category_rules has them). */
export const ROLE_LABELS_EN: Record<EscrowCategory, { payer: string; payee: string }> = {
  goods_products: { payer: 'Buyer', payee: 'Seller' },
  hiring: { payer: 'Client', payee: 'Freelancer' },
  auto_dealership: { payer: 'Buyer', payee: 'Dealer' },
  p2p_crypto: { payer: 'Sender', payee: 'Receiver' },
};

const OTP_PURPOSE_EN: Record<OtpContext, string> = { signup: 'sign-up', login: 'login', reset: 'password reset' };

/** A name as a sentence shows it (null, as SQL's format() shows it, is nothing). */
const name = (n: string | null | undefined) => n ?? '';
/** The inviter's safe first name in an SMS, or Someone when none is left. */
const smsName = (n: string | null | undefined) => n ?? 'Someone';

const naira = nairaEn;

const DISPUTE_REASON_EN: Record<DisputeReasonCode, string> = {
  item_not_received: 'item not received',
  item_not_as_described: 'item not as described',
  item_damaged: 'item damaged',
  service_not_delivered: 'service not delivered',
  service_incomplete: 'service incomplete',
  payment_not_released: 'payment not released',
  fraud_suspected: 'fraud suspected',
  other: 'other',
};

/** A KYC check as people call it. */
export const CHECK_NAMES_EN: Record<KycCheckType, string> = {
  kyc_basic: 'ID document and selfie check',
  kyc_address: 'proof of address',
  nin: 'NIN',
  bvn: 'BVN',
  cac: 'CAC registration',
  tin: 'TIN',
  director_match: 'director check',
  bank_account: 'business bank account check',
};

/** A settlement in words (with a split's share for the payee when known). */
const outcomeEn = (o: DisputeOutcome, payeeAmount: Kobo | null) =>
  o === 'release'
    ? 'release to the payee'
    : o === 'refund'
    ? 'refund to the payer'
    : payeeAmount === null
    ? 'a split'
    : `a split, ${naira(payeeAmount)} to the payee and the rest back to the payer`;

const en: Language = {
  naira,
  notification: {
    escrow_created: (p) => `You created "${p.title}" for ${naira(p.amount)}.`,
    invite_received: (p) =>
      `${name(p.inviter)} invited you to "${p.title}" for ${naira(p.amount)} as ${ROLE_LABELS_EN[p.category].payer}.`,
    invite_received_funded: (p) =>
      `${name(p.inviter)} invited you to "${p.title}" for ${naira(p.amount)}; the money is already in escrow.`,
    funded_payer: (p) => `${naira(p.total_charge)} is locked in escrow for "${p.title}".`,
    funded_payee: (p) => `"${p.title}" is funded: ${naira(p.amount)} is in escrow. You can deliver now.`,
    funding_shortfall: (p) =>
      `We received ${naira(p.received)}; "${p.title}" needs ${naira(p.shortfall)} more to be funded. ` +
      'The money is in your wallet.',
    accepted: (p) => `${name(p.accepter)} accepted "${p.title}". The escrow is active.`,
    accepted_funded: (p) => `${name(p.accepter)} accepted "${p.title}". The money is in escrow and the deal is on.`,
    payment_requested: (p) => `Fund "${p.title}": ${naira(p.total_charge)} (the escrow amount, fee and VAT).`,
    closed_unfunded: (p) => `"${p.title}" was ${p.how === 'declined' ? 'declined by the counterparty' : 'cancelled'}.`,
    refunded_unaccepted: (p) =>
      `"${p.title}" was ${p.how === 'declined' ? 'declined' : 'cancelled'}; ${naira(p.amount)} went back to the ` +
      "payer's wallet.",
    refunded: (p) => `"${p.title}" was refunded: ${naira(p.amount)} went back to the payer's wallet.`,
    delivered_inspection: (p) =>
      `"${p.title}" was delivered. Inspect it: the money is released automatically after ${p.days} day(s) ` +
      'unless you raise a dispute.',
    delivered: (p) => `"${p.title}" was marked delivered. Release the money when you are satisfied.`,
    released_payee: (p) =>
      `${naira(p.amount)} from "${p.title}" was released to you` +
      `${p.to === 'bank' ? ' and is on its way to your bank' : ' and is in your wallet'}.`,
    released_payer: (p) =>
      `"${p.title}" was released${p.automatic ? ' automatically at the end of the inspection period' : ''}.`,
    milestones_released_payee: (p) =>
      `Every milestone of "${p.title}" was released to you: ${naira(p.amount)} in all, less fees.`,
    milestones_released_payer: (p) => `"${p.title}" was released: every milestone is paid.`,
    payout_succeeded: (p) => `${naira(p.amount)} reached your bank account.`,
    payout_failed: (p) => `The payout of ${naira(p.amount)} could not be completed; the money is back in your wallet.`,
    milestone_proposed: (p) => `A milestone "${p.milestone}" (${naira(p.amount)}) was proposed for "${p.title}".`,
    milestone_updated: (p) =>
      `Milestone "${p.milestone}" of "${p.title}" was changed. Review and approve the new terms.`,
    milestone_accepted: (p) => `Milestone "${p.milestone}" was agreed by both parties.`,
    milestone_completed: (p) =>
      `Milestone "${p.milestone}" was marked complete. Release ${naira(p.amount)} when satisfied.`,
    milestone_released: (p) => `Milestone "${p.milestone}" was released to you.`,
    review_received: (p) => `${name(p.reviewer)} rated you ${p.rating} out of 5 for "${p.title}".`,
    dispute_raised: (p) =>
      `The ${p.by_payer ? 'payer' : 'payee'} raised a dispute on "${p.title}" (${DISPUTE_REASON_EN[p.reason_code]}). ` +
      'The money stays in escrow while you settle it; you have 72 hours.',
    dispute_proposal: (p) =>
      `A settlement of the dispute on "${p.title}" was proposed: ${outcomeEn(p.outcome, p.payee_amount)}. ` +
      'Accept or reject it.',
    dispute_proposal_rejected: (p) =>
      `Your proposal (${outcomeEn(p.outcome, null)}) for the dispute on "${p.title}" was rejected.`,
    dispute_withdrawn: (p) => `The dispute on "${p.title}" was withdrawn; the deal continues where it was.`,
    dispute_deadline_soon: (p) =>
      `The dispute on "${p.title}" has 24 hours left to be settled; then ` +
      `${p.auto_release ? 'the money is released to the payee unless the payer takes part' : 'it goes to our team'}.`,
    dispute_escalated: (p) =>
      `The dispute on "${p.title}" was not settled in time and went to our team, who will decide it.`,
    dispute_resolved: (p) =>
      `The dispute on "${p.title}" was settled${p.by_admin ? ' by our team' : ''}: ${outcomeEn(p.outcome, null)}. ` +
      (p.amount > 0 ? `You received ${naira(p.amount)}.` : 'You received nothing from it.'),
    kyc_tier_raised: (p) => `Your account is now verified to tier ${p.tier}: your limits are higher.`,
    kyc_tier_lowered: (p) =>
      `A verification of your account was withdrawn; it is now at tier ${p.tier} and its limits are lower.`,
    verification_failed: (p) =>
      `Your ${CHECK_NAMES_EN[p.check_type]} did not pass. ` +
      (p.can_retry ? 'You can try again.' : 'It cannot be tried again; contact support.'),
    verification_needed: (p) =>
      `Your wallet holds ${naira(p.balance)}, above the ${naira(p.limit)} tier ${p.tier} allows. ` +
      'The money is yours; verify your identity to raise the limit.',
  },
  sms: {
    escrow_invite: (p) =>
      `${smsName(p.inviter)} invited you to a ${CATEGORY_WORD_EN[p.category]} escrow of ${naira(p.amount)} ` +
      `as the ${ROLE_LABELS_EN[p.category].payer}. Open the Escrow app with this number to review it.`,
    escrow_invite_funded: (p) =>
      `${smsName(p.inviter)} invited you to a ${CATEGORY_WORD_EN[p.category]} escrow of ${naira(p.amount)} ` +
      `as the ${ROLE_LABELS_EN[p.category].payee}, and the money is already in escrow. ` +
      'Open the Escrow app with this number to accept it.',
    funding_shortfall: (p) =>
      `We received ${naira(p.received)} and put it in your Escrow wallet. ` +
      `Your ${CATEGORY_WORD_EN[p.category]} escrow needs ${naira(p.total_charge)}: ` +
      `send ${naira(p.shortfall)} more to fund it.`,
    otp_code: (p) => {
      if (!p.code) throw new Error('a one-time code is rendered when it is queued, never from the outbox');
      return `Your Escrow ${OTP_PURPOSE_EN[p.context]} code is ${p.code}. It expires in ${p.minutes} minutes. ` +
        'Never share it.';
    },
    account_exists: () =>
      'Someone asked to sign up with this number, which already has an Escrow account. ' +
      'Log in, or reset your password if you forgot it.',
    dispute_settled: (p) =>
      `Your Escrow dispute was settled (${outcomeEn(p.outcome, null)}). ` +
      (p.amount > 0 ? `${naira(p.amount)} is in your Escrow wallet.` : 'No money came to you from it.'),
    kyc_tier_changed: (p) =>
      p.raised
        ? `Your Escrow account is now verified to tier ${p.tier}. Your new limits are in the app.`
        : `Your Escrow account is now at tier ${p.tier} and its limits are lower. Open the app for details.`,
    verification_needed: (p) =>
      `Your Escrow wallet is above the ${naira(p.limit)} your verification level allows. ` +
      'Verify your identity in the app to raise it.',
  },
  transaction: {
    escrow_funding: (p) => `Escrow funding: ${p.title}`,
    payment_request: (p) => `Payment request: ${p.title}`,
    refund_unaccepted: (p) => `Refund: "${p.title}" was ${p.how === 'declined' ? 'declined' : 'cancelled'}`,
    refund: (p) => `Refund: ${p.title}`,
    escrow_release: (p) => `Released: ${p.title}`,
    milestone_release: (p) => `Milestone released: ${p.milestone}`,
    escrow_payout: (p) => `Payout of "${p.title}" to ${p.bank_name} ${p.account_last4}`,
    wallet_topup: () => 'Wallet top-up by card',
    wallet_topup_saved_card: () => 'Wallet top-up with a saved card',
    virtual_account_deposit: () => 'Bank transfer to your virtual account',
    withdrawal: (p) => `Withdrawal to ${p.bank_name} ${p.account_last4}`,
  },
};

export const LANGUAGES = { en } as const satisfies Record<string, Language>;
export type LanguageCode = keyof typeof LANGUAGES;

// ---- rendering --------------------------------------------------------------------------------

export class UnknownMessageError extends Error {
  override name = 'UnknownMessageError';
}

function render<P>(table: Templates<P>, channel: string, message: { kind: string } | null | undefined): string {
  const kind = message?.kind;
  if (typeof kind !== 'string' || !Object.hasOwn(table, kind)) {
    throw new UnknownMessageError(`no ${channel} message of kind ${JSON.stringify(kind)}`);
  }
  return (table[kind as keyof P] as (p: unknown) => string)(message);
}

/** A notification's content, from its message. */
export function renderNotification(message: NotificationMessage, lang: LanguageCode = 'en'): string {
  return render(LANGUAGES[lang].notification, 'notification', message);
}

/** An SMS body, from its message (one-time codes carry their code here; the outbox never has it). */
export function renderSms(message: SmsMessage, lang: LanguageCode = 'en'): string {
  return render(LANGUAGES[lang].sms, 'sms', message);
}

/** A transaction's description, from its message; a transaction recorded without one has none (''). */
export function renderTransaction(message: TransactionMessage | null, lang: LanguageCode = 'en'): string {
  return message === null ? '' : render(LANGUAGES[lang].transaction, 'transaction', message);
}
