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
// Adding a message: its kind and params in shared/messages/catalog.ts (a notification kind with
// its events, recipients, operations, entity and action), its text in every language's table here
// (the compiler refuses a missing one), the SQL that records it, and a sample in
// tests/integration/messages.test.ts. A second language is a second `Language` object in
// LANGUAGES; only English exists today.

import { nairaEn } from '../core/money.ts';
import type { OtpContext } from '../auth/enums.ts';
import type { DisputeOutcome, DisputeReasonCode } from '../disputes/enums.ts';
import type { EscrowCategory } from '../escrow/enums.ts';
import type { KycCheckType } from '../kyc/enums.ts';
import type {
  Kobo,
  NotificationMessage,
  NotificationParams,
  SmsMessage,
  SmsParams,
  TransactionMessage,
  TransactionParams,
} from './catalog.ts';

// ---- languages --------------------------------------------------------------------------------

type Templates<P> = { [K in keyof P]: (p: P[K]) => string };

/** One language: how it writes an amount, its words for categories and roles, and every message. */
export interface Language {
  naira: (kobo: Kobo | bigint | string) => string;
  notification: Templates<NotificationParams>;
  sms: Templates<SmsParams>;
  transaction: Templates<TransactionParams>;
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

const OTP_PURPOSE_EN: Record<OtpContext, string> = {
  signup: 'sign-up',
  login: 'login',
  reset: 'password reset',
  account_delete: 'account deletion',
};

/** A name as a sentence shows it (null, as SQL's format() shows it, is nothing). */
const name = (n: string | null | undefined) => n ?? '';
/** The inviter's safe first name in an SMS, or Someone when none is left. */
const smsName = (n: string | null | undefined) => n ?? 'Someone';

const naira = nairaEn;

/** What a release's description adds on a merchant escrow: the merchant's fee taken from it (none when 0). */
const merchantFeeEn = (p: { merchant?: string; merchant_fee?: Kobo }) =>
  p.merchant === undefined || !p.merchant_fee ? '' : ` (${p.merchant} fee ${naira(p.merchant_fee)})`;

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

/** The limit a held payout would pass, in words. */
const payoutLimitEn = (limit: 'single' | 'daily', amount: Kobo) =>
  limit === 'single' ? `limit of ${naira(amount)} a withdrawal` : `daily limit of ${naira(amount)}`;

const en: Language = {
  naira,
  notification: {
    escrow_created: (p) => `You created "${p.title}" for ${naira(p.amount)}.`,
    merchant_escrow: (p) =>
      `${p.merchant} opened a ${CATEGORY_WORD_EN[p.category]} escrow of ${naira(p.amount)} with you as the ` +
      `${ROLE_LABELS_EN[p.category][p.side].toLowerCase()}.` +
      (p.side === 'payer' ? ` Pay at the checkout ${p.merchant} gives you; the money stays in escrow.` : ''),
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
    verify_to_move_money: (p) =>
      `Your wallet holds ${naira(p.balance)}. Money leaves a wallet only once your identity is verified: ` +
      `verify to tier ${p.tier} to withdraw it or pay with it.`,
    verify_to_pay_out: (p) =>
      `${naira(p.amount)} paid to you is in your wallet and was not sent to your bank: it would pass your ` +
      `${payoutLimitEn(p.kyc_limit, p.limit)}. Withdraw it within your limits` +
      (p.tier === null ? '.' : `, or verify to tier ${p.tier} to raise them.`),
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
      return `Your Escrow ${OTP_PURPOSE_EN[p.context]} code is ${p.code}. ` +
        (p.context === 'account_delete' ? 'Entering it deletes your Escrow account for good. ' : '') +
        `It expires in ${p.minutes} minutes. Never share it.`;
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
    verify_to_move_money: (p) =>
      `Your Escrow wallet holds ${naira(p.balance)}. To withdraw it, verify your identity in the app ` +
      `(tier ${p.tier}).`,
    verify_to_pay_out: (p) =>
      `${naira(p.amount)} paid to you is in your Escrow wallet, not sent to your bank: it would pass your ` +
      `${payoutLimitEn(p.kyc_limit, p.limit)}. Withdraw it in the app within your limits` +
      (p.tier === null ? '.' : `, or verify to tier ${p.tier} to raise them.`),
    merchant_escrow: (p) =>
      `${p.merchant} opened a ${CATEGORY_WORD_EN[p.category]} escrow of ${naira(p.amount)} with you as the ` +
      `${ROLE_LABELS_EN[p.category][p.side]}. Open the Escrow app with this number to follow it.`,
  },
  transaction: {
    escrow_funding: (p) => `Escrow funding: ${p.title}`,
    payment_request: (p) => `Payment request: ${p.title}`,
    refund_unaccepted: (p) => `Refund: "${p.title}" was ${p.how === 'declined' ? 'declined' : 'cancelled'}`,
    refund: (p) => `Refund: ${p.title}`,
    escrow_release: (p) => `Released: ${p.title}${merchantFeeEn(p)}`,
    milestone_release: (p) => `Milestone released: ${p.milestone}${merchantFeeEn(p)}`,
    merchant_fee: (p) => `${p.merchant} fee: ${p.title}`,
    escrow_payout: (p) => `Payout of "${p.title}" to ${p.bank_name} ${p.account_last4}`,
    wallet_topup: () => 'Wallet top-up by card',
    wallet_topup_saved_card: () => 'Wallet top-up with a saved card',
    virtual_account_deposit: () => 'Bank transfer to your virtual account',
    withdrawal: (p) => `Withdrawal to ${p.bank_name} ${p.account_last4}`,
    merchant_withdrawal: (p) => `${p.merchant} withdrawal to ${p.bank_name} ${p.account_last4}`,
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
