// webhook-payments: Paystack-shaped events, verified on the raw bytes, each taking effect once.
// The inbox row and the event's effect are written in one transaction: a redelivered or
// concurrent duplicate meets the primary key and does nothing. A failing effect rolls back, is
// logged with the event key and kept in private.webhook_failures, and the provider still gets
// 200 {received: true} (as the spec requires), so a later redelivery can apply it afresh.
import { z } from 'zod';
import { sha256Hex } from '../../core/crypto.ts';
import { afterResponse } from '../../core/background.ts';
import { getConfig } from '../../core/config.ts';
import type { HeaderAuth } from '../../core/endpoint.ts';
import { asService, callAsService, inline, sendWithCommit, type Tx } from '../../core/db.ts';
import { INVALID_SIGNATURE } from '../../core/refusals.ts';
import { errorMessage, log } from '../../core/log.ts';
import { dispatchQueuedSmsSoon } from '../../messages/sms-outbox.ts';
import { payments } from './index.ts';
import { chargeMismatch, type ChargeVerification, ProviderError } from './provider.ts';
import { validSignature } from './signature.ts';
import { chars } from '../../core/validation.ts';
import { startRefundsOf } from '../refunds.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const paymentsEventSchema = z.looseObject({
  event: chars(1, 100),
  data: z.looseObject({}),
});

export type PaymentsEvent = z.output<typeof paymentsEventSchema>;

/**
 * The signature headers: the spec's name, and Paystack's own (set the secret to the Paystack key).
 * Either one, the HMAC-SHA512 of the raw body in hex.
 */
export const PAYMENTS_SIGNATURE: HeaderAuth = {
  scheme: 'paymentsSignature',
  description: 'HMAC-SHA512 of the raw body with PAYMENTS_WEBHOOK_SECRET (the Paystack secret key), in hex, ' +
    'in x-payments-signature or x-paystack-signature.',
  headers: [
    {
      name: 'x-payments-signature',
      required: false,
      description: 'The signature (this or x-paystack-signature; when both are sent, this one is checked)',
    },
    { name: 'x-paystack-signature', required: false, description: "The signature under Paystack's own header name" },
  ],
};

/** Signature check on the raw bytes, before anything is parsed. */
export async function verifyPaymentsSignature(req: Request, raw: Uint8Array): Promise<void> {
  const secret = getConfig().PAYMENTS_WEBHOOK_SECRET;
  const [spec, paystack] = PAYMENTS_SIGNATURE.headers.map((h) => req.headers.get(h.name));
  const signature = spec ?? paystack ?? null;
  if (!(await validSignature(secret, raw, signature))) throw INVALID_SIGNATURE.error({ what: 'webhook signature' });
}

type Data = Record<string, unknown>;
const str = (
  v: unknown,
): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null);
const obj = (v: unknown): Data => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Data) : {});
/** A positive whole number of kobo, exact as a double (2^53 and above are no exact amount: null). */
const kobo = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : null;
};

/** What identifies an event across redeliveries (Paystack events carry no event id). */
async function eventKey(e: PaymentsEvent, raw: Uint8Array): Promise<string> {
  const d = e.data as Data;
  if (e.event.startsWith('dedicatedaccount.')) {
    const customer = obj(d.customer);
    const account = obj(d.dedicated_account);
    const base = `${e.event}:${str(customer.customer_code) ?? str(customer.email) ?? 'none'}:${
      str(account.id) ?? str(account.account_number) ?? 'none'
    }`;
    // A failure names no account, and Paystack keeps one customer per email, so every failed
    // attempt of a customer has the same fields: keyed on them, the failure of a retry would be
    // swallowed as a duplicate and the account left pending for good. Its effect (inactive unless
    // already active) is idempotent, so each delivery is applied and recorded on its own.
    return e.event === 'dedicatedaccount.assign.failed' ? `${base}:${crypto.randomUUID()}` : base;
  }
  // a refund's events name the charge it refunds (Paystack sends no refund id in them), and we ask
  // at most one refund per charge
  if (e.event.startsWith('refund.') && str(d.transaction_reference)) {
    return `${e.event}:${str(d.transaction_reference)}`;
  }
  const id = str(d.id) ?? str(d.reference) ?? str(d.transfer_code);
  return id ? `${e.event}:${id}` : `${e.event}:sha256:${await sha256Hex(new TextDecoder().decode(raw))}`;
}

// ---- outcomes ------------------------------------------------------------------------------

type Mismatch = 'amount_mismatch' | 'currency_mismatch';
/** What private.escrow_mark_funded answers: the escrow's status once its money is locked. */
type FundedStatus = 'active' | 'funded';
/** What private.topup_succeed, private.escrow_charge_succeed and private.charge_hold_for_review answer. */
type ChargeResult =
  | 'succeeded'
  | 'already_done'
  | 'not_found'
  | 'flagged'
  | 'held_for_review'
  | 'credited_to_wallet'
  /** an app escrow's late charge whose payer deleted the account: in the suspense account, flagged */
  | 'credited_to_suspense'
  /** a merchant escrow's payment after its cancel or expiry: to go back through the provider */
  | 'refund_due'
  | `escrow:${FundedStatus}`;
/** What private.bank_transfer_received answers. */
type BankTransferResult =
  | 'already_done'
  | 'deposit'
  | 'deposit:shortfall'
  | `deposit:escrow:${FundedStatus}`
  // into a deleted user's dedicated account: the suspense account, flagged for operators
  | 'suspense';
/** What private.payout_succeed and private.payout_fail answer for a known transfer. */
type PayoutResult = 'succeeded' | 'failed' | 'already_done';
type TransferEvent = 'transfer.success' | 'transfer.failed' | 'transfer.reversed';
/** What private.escrow_refund_settle answers for a known refund. */
type RefundResult = 'succeeded' | 'failed' | 'pending' | 'flagged' | 'already_done';
type RefundEvent = 'refund.processed' | 'refund.failed' | 'refund.pending' | 'refund.processing';

/**
 * What one event did. Kept as text in private.webhook_inbox.outcome (outcomeText); what follows
 * the commit is decided from it by a switch the compiler checks for every kind (queuedSms).
 */
export type WebhookOutcome =
  | { kind: 'duplicate' }
  | { kind: 'ignored'; reason?: 'not_success' | 'already_active' }
  | { kind: 'flagged'; reason: string }
  /** a card charge: a top-up, or an escrow's funding; `check` when the event's figures disagreed */
  | { kind: 'topup' | 'escrow_charge'; result: ChargeResult; check?: Mismatch | 'verified' }
  | { kind: 'bank_transfer'; result: BankTransferResult }
  | { kind: 'transfer'; event: TransferEvent; result: PayoutResult }
  /** a refund to a merchant escrow's buyer, by the charge it refunds */
  | { kind: 'refund'; event: RefundEvent; result: RefundResult }
  | { kind: 'virtual_account'; status: 'active' | 'inactive' };

/**
 * What a bank transfer's outcome text puts before bank_transfer_received's answer. A deposit
 * recorded in one call (deposited) passes it to private.webhook_deposit, which keeps the same text.
 */
const BANK_TRANSFER_OUTCOME = 'virtual_account_';

/** The outcome as private.webhook_inbox.outcome keeps it (and operators query it). */
export function outcomeText(o: WebhookOutcome): string {
  switch (o.kind) {
    case 'duplicate':
      return 'duplicate';
    case 'ignored':
      return o.reason ? `ignored:${o.reason}` : 'ignored';
    case 'flagged':
      return `flagged:${o.reason}`;
    case 'topup':
    case 'escrow_charge':
      return `${o.kind}:${o.result}${o.check ? `:${o.check}` : ''}`;
    case 'bank_transfer':
      return `${BANK_TRANSFER_OUTCOME}${o.result}`;
    case 'transfer':
    case 'refund':
      return `${o.event}:${o.result}`;
    case 'virtual_account':
      return `virtual_account:${o.status}`;
  }
}

/**
 * Whether the event's transaction queued SMS, to be dispatched after the commit: an escrow whose
 * money arrived and that became active invites its counterparty (private.escrow_mark_funded), and
 * a bank transfer short of what a waiting escrow needs tells the payer (bank_transfer_received).
 */
export function queuedSms(o: WebhookOutcome): boolean {
  switch (o.kind) {
    case 'escrow_charge':
      return o.result === 'escrow:active';
    case 'bank_transfer':
      // any deposit may also have told the user to verify (private.kyc_balance_notice)
      return o.result !== 'already_done';
    case 'duplicate':
    case 'ignored':
    case 'flagged':
    case 'topup':
    case 'transfer':
    case 'refund':
    case 'virtual_account':
      return false;
  }
}

/** The one row of `select private.<fn>(...) as outcome`. */
function outcomeOf<T extends string | null>(rows: readonly { outcome: T }[]): T {
  const row = rows[0];
  if (!row) throw new Error('the SQL function answered no outcome');
  return row.outcome;
}

async function flag(
  tx: Tx,
  reason: string,
  e: PaymentsEvent,
  extra: { transaction_id?: string | null; expected?: number | null; received?: number | null; payload?: Data } = {},
): Promise<WebhookOutcome> {
  const d = e.data as Data;
  await tx`insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
           values (${reason}, ${extra.transaction_id ?? null}, ${str(d.reference)}, ${extra.expected ?? null}, ${
    extra.received ?? null
  },
                   ${tx.json((extra.payload ?? e) as never)})`;
  return { kind: 'flagged', reason };
}

/** What a deposit keeps of the event (shown in the transaction's details). */
const depositMetadata = (d: Data) => ({
  sender_name: str(obj(d.authorization).sender_name),
  provider_reference: str(d.reference),
});

/**
 * A charge.success into a virtual account with everything the credit needs, or null: such an
 * event is recorded and credited in one call (deposited); any other goes through apply().
 */
function knownDeposit(e: PaymentsEvent) {
  if (e.event !== 'charge.success') return null;
  const d = e.data as Data;
  const amount = kobo(d.amount);
  const chargeId = str(d.id) ?? str(d.reference);
  const accountNumber = receiverAccountNumber(d);
  const success = !str(d.status) || d.status === 'success';
  if (d.channel !== 'dedicated_nuban' || amount === null || !success || !chargeId || !accountNumber) return null;
  return { amount, chargeId, accountNumber, metadata: depositMetadata(d) };
}

/** The dedicated account a transfer was paid into, as the event names it. */
const receiverAccountNumber = (d: Data) =>
  str(obj(d.authorization).receiver_bank_account_number) ??
    str(obj(d.metadata).receiver_account_number) ??
    str(obj(d.dedicated_account).account_number);

/** Which user a transfer into a dedicated virtual account belongs to. */
async function virtualAccountOwner(tx: Tx, d: Data): Promise<string | null> {
  const number = receiverAccountNumber(d);
  if (number) {
    const [row] = await inline(tx)<
      { user_id: string }[]
    >`select user_id from public.virtual_accounts where account_number = ${number}`;
    if (row) return row.user_id;
  }
  const code = str(obj(d.customer).customer_code);
  if (code) {
    const [row] = await tx<
      { user_id: string }[]
    >`select user_id from public.virtual_accounts where provider_customer_code = ${code}`;
    if (row) return row.user_id;
  }
  return null;
}

/** Our customers' emails are <user id>@PAYMENTS_EMAIL_DOMAIN. */
function userFromEmail(email: string | null): string | null {
  if (!email) return null;
  const [local, domain] = email.split('@');
  return local && UUID.test(local) && domain === getConfig().PAYMENTS_EMAIL_DOMAIN ? local : null;
}

// ---- card charges: value only for what the provider confirms ------------------------------

/**
 * What was learnt about a card charge.success before the webhook's transaction opened: the
 * pending (or still creditable) transaction its reference names, what that transaction expects,
 * whether the event's figures disagree, and, when they do, what the provider's verify answered.
 */
interface ChargeCheck {
  reference: string;
  type: 'wallet_topup' | 'escrow_funding';
  expected: number;
  mismatch: Mismatch | null;
  /** verify's answer; null: the provider has no such charge; 'unavailable': no usable answer */
  verification?: ChargeVerification | null | 'unavailable';
}

const eventCurrency = (
  d: Data,
): string | null => (typeof d.currency === 'string' && d.currency.length > 0 ? d.currency.toUpperCase() : null);

/**
 * Runs before the webhook's database transaction (no transaction is held across the provider's
 * HTTP call). For a card charge.success whose reference is a top-up or escrow charge that could
 * still be credited, compares the event's amount and currency with what the transaction expects
 * (a top-up: its amount; an escrow charge: the escrow's total_charge); when they differ, asks the
 * provider's verify. Null when there is nothing to compare (another event, a bank transfer, an
 * unknown or closed reference, an event already processed): apply() then does what it always did.
 */
async function checkCharge(e: PaymentsEvent, key: string): Promise<ChargeCheck | null> {
  if (e.event !== 'charge.success') return null;
  const d = e.data as Data;
  const amount = kobo(d.amount);
  const reference = str(d.reference);
  if (amount === null || d.channel === 'dedicated_nuban' || (str(d.status) && d.status !== 'success')) return null;
  if (!reference || !UUID.test(reference)) return null;
  const [row] = await asService((tx) =>
    tx<{ type: 'wallet_topup' | 'escrow_funding'; expected: string; seen: boolean }[]>`
    select t.type, (case when t.type = 'wallet_topup' then t.amount else e.total_charge end)::text as expected,
           exists (select 1 from private.webhook_inbox i where i.provider = 'payments' and i.event_key = ${key}) as seen
      from public.transactions t left join public.escrows e on e.id = t.escrow_id
     where t.id = ${reference}
       and ((t.type = 'wallet_topup' and t.status = 'pending')
         or (t.type = 'escrow_funding' and t.status <> 'succeeded' and not t.metadata ? 'credited_to_wallet'
             and not t.metadata ? 'refund_due' and not t.metadata ? 'credited_to_suspense'))`
  );
  if (!row || row.seen || row.expected === null) return null;
  const expected = Number(row.expected);
  const currency = eventCurrency(d);
  const mismatch = chargeMismatch(amount, currency, expected);
  const check: ChargeCheck = { reference, type: row.type, expected, mismatch };
  if (!mismatch) return check;
  try {
    check.verification = await payments().verifyCharge(reference);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    check.verification = 'unavailable';
  }
  log.warn('webhook.charge_mismatch', {
    reference,
    reason: mismatch,
    expected,
    received: amount,
    currency,
    verified: check.verification === 'unavailable'
      ? 'unavailable'
      : check.verification === null
      ? 'not_found'
      : check.verification,
  });
  return check;
}

/** Whether verify's answer is a success of exactly the expected amount, in naira. */
const confirms = (c: ChargeCheck): c is ChargeCheck & { verification: ChargeVerification } =>
  typeof c.verification === 'object' && c.verification !== null &&
  c.verification.status === 'success' &&
  chargeMismatch(c.verification.amountKobo, c.verification.currency, c.expected) === null;

/**
 * A charge.success whose figures differ from what its transaction expects. A verified success of
 * the expected amount in naira is credited as that (expected) amount, and the disagreement is
 * still flagged for audit. Anything else credits nothing: the transaction stays pending under
 * review (private.charge_hold_for_review) for reconciliation or an operator.
 */
async function mismatchedCharge(
  tx: Tx,
  e: PaymentsEvent,
  c: ChargeCheck & { mismatch: Mismatch },
  received: number,
): Promise<WebhookOutcome> {
  const kind = c.type === 'wallet_topup' ? 'topup' : 'escrow_charge';
  const verification = c.verification === 'unavailable'
    ? { unavailable: true }
    : c.verification === null || c.verification === undefined
    ? { found: false }
    : c.verification;
  if (!confirms(c)) {
    const providerStatus = typeof c.verification === 'object' && c.verification !== null ? c.verification.status : null;
    const result = outcomeOf(
      await tx<{ outcome: ChargeResult }[]>`
      select private.charge_hold_for_review(${c.reference}, ${c.mismatch}, ${received}, ${providerStatus},
        ${tx.json({ ...e, verification, action: 'held_for_review' } as never)}) as outcome`,
    );
    return { kind, result, check: c.mismatch };
  }
  const payload = { ...e, verification, action: 'credited_verified_amount' };
  const chargeId = c.verification.chargeId;
  const result = outcomeOf(
    c.type === 'wallet_topup'
      ? await tx<{ outcome: ChargeResult }[]>`
          select private.topup_succeed(${c.reference}, ${c.expected}, ${chargeId}, ${tx.json(payload as never)})
            as outcome`
      : await tx<{ outcome: ChargeResult }[]>`
          select private.escrow_charge_succeed(${c.reference}, ${c.expected}, ${chargeId}, ${tx.json(payload as never)})
            as outcome`,
  );
  // the event's figures were wrong even though the charge is good: kept for audit
  await flag(tx, c.mismatch, e, { transaction_id: c.reference, expected: c.expected, received, payload });
  return { kind, result, check: 'verified' };
}

async function chargeSuccess(
  tx: Tx,
  e: PaymentsEvent,
  provider: string,
  check: ChargeCheck | null,
): Promise<WebhookOutcome> {
  const d = e.data as Data;
  const amount = kobo(d.amount);
  if (amount === null) return flag(tx, 'invalid_amount', e);
  if (str(d.status) && d.status !== 'success') return { kind: 'ignored', reason: 'not_success' };

  if (d.channel === 'dedicated_nuban') {
    const chargeId = str(d.id) ?? str(d.reference);
    const metadata = depositMetadata(d);
    const userId = await virtualAccountOwner(tx, d);
    if (!userId) return flag(tx, 'unknown_virtual_account', e, { received: amount });
    if (!chargeId) return flag(tx, 'missing_charge_id', e, { received: amount });
    // credited to the wallet, and an escrow waiting for this payer's bank transfer funded if it now can be
    const result = outcomeOf(
      await inline(tx)<{ outcome: BankTransferResult }[]>`
      select private.bank_transfer_received(${userId}, ${amount}, ${provider}, ${chargeId}, ${metadata}::jsonb)
        as outcome`,
    );
    return { kind: 'bank_transfer', result };
  }

  const reference = str(d.reference);
  if (!reference || !UUID.test(reference)) return flag(tx, 'unknown_reference', e, { received: amount });
  if (check?.mismatch && check.reference === reference) {
    return mismatchedCharge(tx, e, { ...check, mismatch: check.mismatch }, amount);
  }
  // The event agrees with the transaction (or there is none to credit): the SQL functions credit
  // only the expected amount, so a transaction that changed since the check is flagged, not paid.
  const topup = outcomeOf(
    await tx<{ outcome: ChargeResult }[]>`
    select private.topup_succeed(${reference}, ${amount}, ${str(d.id)}, ${tx.json(e as never)}) as outcome`,
  );
  if (topup !== 'not_found') return { kind: 'topup', result: topup };
  // kind escrow_charge: the reference is an escrow's funding transaction
  const escrow = outcomeOf(
    await tx<{ outcome: ChargeResult }[]>`
    select private.escrow_charge_succeed(${reference}, ${amount}, ${str(d.id)}, ${tx.json(e as never)}) as outcome`,
  );
  if (escrow === 'not_found') return flag(tx, 'unknown_reference', e, { received: amount });
  return { kind: 'escrow_charge', result: escrow };
}

/** Why a transfer did not pay out (data.reason is the narration we sent, not a cause). */
function failureReason(e: PaymentsEvent): string {
  if (e.event === 'transfer.reversed') return 'reversed';
  const d = e.data as Data;
  return str(d.gateway_response) ?? str(d.failures) ?? 'failed';
}

async function transferOutcome(tx: Tx, e: PaymentsEvent & { event: TransferEvent }): Promise<WebhookOutcome> {
  const d = e.data as Data;
  const reference = str(d.reference);
  if (!reference || !UUID.test(reference)) return flag(tx, 'unknown_transfer_reference', e);
  const code = str(d.transfer_code);
  const result = outcomeOf(
    e.event === 'transfer.success'
      ? await tx<{ outcome: PayoutResult | 'not_found' }[]>`
          select private.payout_succeed(${reference}, ${code}) as outcome`
      : await tx<{ outcome: PayoutResult | 'not_found' }[]>`
          select private.payout_fail(${reference}, ${failureReason(e)}, ${code}) as outcome`,
  );
  if (result === 'not_found') return flag(tx, 'unknown_transfer_reference', e);
  // an escrow payout: the payee hears how it went (the escrow itself is already released)
  if (result !== 'already_done') {
    await tx`select private.escrow_payout_settled(${reference}, ${e.event === 'transfer.success'})`;
  }
  return { kind: 'transfer', event: e.event, result };
}

/**
 * A refund's outcome, by the charge it names (transaction_reference): processed succeeds our
 * refund once when its amount is the refund's, in naira; failed holds it for an operator.
 */
async function refundOutcome(tx: Tx, e: PaymentsEvent & { event: RefundEvent }): Promise<WebhookOutcome> {
  const d = e.data as Data;
  const reference = str(d.transaction_reference);
  if (!reference || !UUID.test(reference)) return flag(tx, 'unknown_refund_reference', e);
  const result = outcomeOf(
    await tx<{ outcome: RefundResult | 'not_found' }[]>`
      select private.escrow_refund_settle(${reference}, ${e.event}, ${kobo(d.amount)}, ${eventCurrency(d)},
        ${str(d.refund_reference)}, ${tx.json(e as never)}) as outcome`,
  );
  if (result === 'not_found') return flag(tx, 'unknown_refund_reference', e, { received: kobo(d.amount) });
  return { kind: 'refund', event: e.event, result };
}

const isRefundEvent = (e: PaymentsEvent): e is PaymentsEvent & { event: RefundEvent } =>
  e.event === 'refund.processed' || e.event === 'refund.failed' || e.event === 'refund.pending' ||
  e.event === 'refund.processing';

/**
 * The provider assigned a dedicated account to an account deleted while it was pending: it stays
 * inactive and nameless (the erased name is not written back); its number and the provider's id
 * are kept, so money still sent to it goes to suspense, and its deactivation is requested (an open
 * flag the job's retry asks the provider for at its next run, private.deactivation_requested).
 */
async function assignedAfterDeletion(
  tx: Tx,
  e: PaymentsEvent,
  userId: string,
  account: Data,
  customer: Data,
): Promise<WebhookOutcome> {
  const providerId = str(account.id);
  const updated = await tx<{ provider: string }[]>`
    update public.virtual_accounts
       set status = 'inactive', account_number = ${str(account.account_number)}, account_name = null,
           bank_name = ${str(obj(account.bank).name)}, provider_customer_code = ${str(customer.customer_code)},
           provider_account_id = ${providerId}, failure_reason = 'account_deleted', updated_at = now()
     where user_id = ${userId} returning provider`;
  if (!updated[0]) return flag(tx, 'unknown_customer', e);
  await tx`select private.deactivation_requested(${userId}, ${updated[0].provider}, ${providerId}, false)`;
  return { kind: 'virtual_account', status: 'inactive' };
}

async function dedicatedAccount(tx: Tx, e: PaymentsEvent): Promise<WebhookOutcome> {
  const d = e.data as Data;
  const customer = obj(d.customer);
  const userId = userFromEmail(str(customer.email));
  if (!userId) return flag(tx, 'unknown_customer', e);
  if (e.event === 'dedicatedaccount.assign.success') {
    const account = obj(d.dedicated_account);
    const number = str(account.account_number);
    if (!number) return flag(tx, 'missing_account_number', e);
    const [owner] = await tx<{ deleted: boolean }[]>`
      select deleted_at is not null as deleted from private.users where id = ${userId}`;
    if (owner?.deleted) return assignedAfterDeletion(tx, e, userId, account, customer);
    const updated = await tx`
      update public.virtual_accounts
         set status = 'active', account_number = ${number}, account_name = ${str(account.account_name)},
             bank_name = ${str(obj(account.bank).name)}, provider_customer_code = ${str(customer.customer_code)},
             provider_account_id = ${str(account.id)},
             failure_reason = null, updated_at = now()
       where user_id = ${userId} returning user_id`;
    return updated.length > 0 ? { kind: 'virtual_account', status: 'active' } : flag(tx, 'unknown_customer', e);
  }
  const reason = str(d.reason) ?? str(obj(d.identification).status) ?? 'assignment failed';
  const updated = await tx`
    update public.virtual_accounts set status = 'inactive', failure_reason = ${reason}, updated_at = now()
     where user_id = ${userId} and status <> 'active' returning user_id`;
  if (updated.length === 0) return { kind: 'ignored', reason: 'already_active' };
  return { kind: 'virtual_account', status: 'inactive' };
}

const isTransferEvent = (e: PaymentsEvent): e is PaymentsEvent & { event: TransferEvent } =>
  e.event === 'transfer.success' || e.event === 'transfer.failed' || e.event === 'transfer.reversed';

async function apply(tx: Tx, e: PaymentsEvent, provider: string, check: ChargeCheck | null): Promise<WebhookOutcome> {
  if (isTransferEvent(e)) return transferOutcome(tx, e);
  if (isRefundEvent(e)) return refundOutcome(tx, e);
  switch (e.event) {
    case 'charge.success':
      return chargeSuccess(tx, e, provider, check);
    case 'dedicatedaccount.assign.success':
    case 'dedicatedaccount.assign.failed':
      return dedicatedAccount(tx, e);
    default:
      return { kind: 'ignored' };
  }
}

/**
 * webhook-payments: verify (a card charge whose figures disagree is checked with the provider,
 * before any transaction), then record and apply in one transaction (a deposit into an account
 * known by number: in one round trip, deposited), then what follows the commit; a failure is kept
 * in private.webhook_failures (keepFailure).
 */
export async function webhookPayments(
  e: PaymentsEvent,
  raw: Uint8Array,
  requestId: string,
): Promise<{ received: true }> {
  const key = await eventKey(e, raw);
  const provider = getConfig().PAYMENTS_PROVIDER;
  try {
    // before the transaction: a disagreeing charge is checked with the provider over HTTP
    const check = await checkCharge(e, key);
    const outcome = (await deposited(e, key, provider)) ??
      (await asService((tx) => recordAndApply(tx, e, key, provider, check)));
    afterCommitted(e, key, outcome, requestId);
  } catch (err) {
    await keepFailure(e, key, requestId, err);
  }
  return { received: true };
}

/**
 * The webhook's one transaction: the event recorded in the inbox (a duplicate does nothing more),
 * its effect applied, and its outcome written with the commit.
 */
async function recordAndApply(
  tx: Tx,
  e: PaymentsEvent,
  key: string,
  provider: string,
  check: ChargeCheck | null,
): Promise<WebhookOutcome> {
  // the statements of every event are written with inline: no Describe round trip each
  const inserted = await inline(tx)`
    insert into private.webhook_inbox (provider, event_key, event_type, payload, outcome)
    values ('payments', ${key}, ${e.event}, ${e}, 'processing')
    on conflict do nothing returning event_key`;
  if (inserted.length === 0) return { kind: 'duplicate' };
  const result = await apply(tx, e, provider, check);
  // recorded with the commit: sent together with COMMIT, a failure fails the transaction
  sendWithCommit(
    tx,
    inline(tx)`update private.webhook_inbox set outcome = ${outcomeText(result)}
                where provider = 'payments' and event_key = ${key}`,
  );
  return result;
}

/**
 * The most frequent event, a transfer into a virtual account known by number, in one round trip:
 * private.webhook_deposit records it in the inbox once per key, credits it and keeps its outcome
 * (the text outcomeText gives), all in one call sent with the setup as one message (one
 * transaction, which commits or fails as a whole). Null, having written nothing, for any other
 * event and for an account number nobody has: that one goes the general way (recordAndApply),
 * where it is looked up by customer code, or flagged.
 */
async function deposited(e: PaymentsEvent, key: string, provider: string): Promise<WebhookOutcome | null> {
  const deposit = knownDeposit(e);
  if (!deposit) return null;
  const [rows] = await callAsService((tx) => [
    inline(tx)<{ outcome: BankTransferResult | 'duplicate' | null }[]>`
      select private.webhook_deposit(${key}, ${e.event}, ${e}, ${deposit.accountNumber}, ${deposit.amount},
        ${provider}, ${deposit.chargeId}, ${deposit.metadata}, ${BANK_TRANSFER_OUTCOME}) as outcome`,
  ]);
  const outcome = outcomeOf(rows);
  if (outcome === null) return null;
  return outcome === 'duplicate' ? { kind: 'duplicate' } : { kind: 'bank_transfer', result: outcome };
}

/**
 * After the commit: the outcome logged, and the SMS the event queued sent after the answer (the
 * provider waits for nothing but the commit, and the job sends whatever this leaves unsent).
 */
function afterCommitted(e: PaymentsEvent, key: string, outcome: WebhookOutcome, requestId: string): void {
  log.info('webhook.payments', {
    event_type: e.event,
    event_key: key,
    outcome: outcomeText(outcome),
    request_id: requestId,
  });
  if (queuedSms(outcome)) afterResponse('sms.dispatch', () => dispatchQueuedSmsSoon());
  // a merchant escrow's charge that came after its cancel or expiry: refunded through the provider
  const reference = str((e.data as Data).reference);
  if (outcome.kind === 'escrow_charge' && outcome.result === 'refund_due' && reference) {
    afterResponse('escrow.refund', () => startRefundsOf({ chargeReference: reference }));
  }
}

/**
 * A failing event: logged with its key and kept in private.webhook_failures, so the provider gets
 * its 200 and a redelivery can apply it afresh.
 */
async function keepFailure(e: PaymentsEvent, key: string, requestId: string, err: unknown): Promise<void> {
  log.error('webhook.payments_failed', {
    event_type: e.event,
    event_key: key,
    request_id: requestId,
    error: errorMessage(err),
  });
  await asService((tx) =>
    tx`
    insert into private.webhook_failures (provider, event_key, event_type, payload, error)
    values ('payments', ${key}, ${e.event}, ${tx.json(e as never)}, ${errorMessage(err)})`
  ).catch((e2) => {
    // Neither applied nor kept (the database is out of reach): the provider must send it again,
    // so the answer is an error (503 or 500), never a 200 that would lose the event.
    log.error('webhook.failure_not_recorded', { event_key: key, error: errorMessage(e2) });
    throw err;
  });
}
