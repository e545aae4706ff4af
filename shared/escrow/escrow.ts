// Escrow operations. Every transition is one SQL function (supabase/migrations/*_escrow_*.sql) run
// in one transaction as service_role with the caller as the actor; reads run as the caller under
// RLS. After a transition commits, the SMS it queued (an invitation) are dispatched and the payout
// it started (a release) is sent to the provider (shared/money/payouts.ts), through afterCommit
// (shared/core/background.ts).
import { base64url, hmacHex, randomBytes, sha256Hex } from '../core/crypto.ts';
import { currentKeyClaim } from '../core/key-claim.ts';
import { afterCommit } from '../core/background.ts';
import { getConfig } from '../core/config.ts';
import type postgres from 'postgres';
import { asService, callAsService, inline, readAsUser, sqlLiteral, sqlText } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import { feeBreakdown, feeBreakdownView, type FeeSchedule } from './fees.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { RATE_LIMITED } from '../core/refusals.ts';
import { COUNTERPARTY_IS_SELF, ESCROW_NOT_FOUND, VIRTUAL_ACCOUNT_REQUIRED } from './refusals.ts';
import { toNaira } from '../core/money.ts';
import { JsonText } from '../core/json-text.ts';
import { savedCardAuthorization, startCharge } from '../money/payments/charge.ts';
import { payments } from '../money/payments/index.ts';
import { startEscrowPayout } from '../money/payouts.ts';
import { startRefundsOf } from '../money/refunds.ts';
import {
  type EscrowFundResponse,
  type EscrowListItemResponse,
  escrowListItemResponse,
  type EscrowResponse,
  escrowResponse,
} from './schema.ts';
import { answerOf, columnsOf, type RowOf, selectList } from '../core/rows.ts';
import { dispatchQueuedSmsSoon } from '../messages/sms-outbox.ts';

/**
 * An escrow as its parties may read it: the answer's fields but two, with the amounts in kobo.
 * counterparty_id itself is not readable by the API roles
 * (supabase/migrations/20261121000600_escrows.sql): before the counterparty accepts or declines it
 * would tell the initiator whether the invited phone has an account. revealed_counterparty_id is
 * the same id once they have accepted or declined, null before. The fee breakdown is computed from
 * the stored fees.
 */
export type EscrowRow = RowOf<EscrowResponse, 'counterparty_id' | 'fee_breakdown' | 'merchant', {
  revealed_counterparty_id: string | null;
  merchant_id: string | null;
  merchant_fee: string | null;
  merchant_name: string | null;
  amount: string;
  payer_fee: string;
  vat: string;
  total_charge: string;
  seller_fee: string;
  seller_payout: string;
  released_amount: string;
  conversation_id?: string;
}>;

/** The escrow columns a view needs (`authenticated` may select every one but counterparty_id and invite_token_hash). */
export const ESCROW_COLUMNS = columnsOf(escrowResponse, {
  computed: ['counterparty_id', 'fee_breakdown', 'merchant'],
  stored: [
    'revealed_counterparty_id',
    'payer_fee',
    'vat',
    'total_charge',
    'seller_fee',
    'seller_payout',
    'merchant_id',
    'merchant_fee',
  ],
});

/** An escrow's `merchant`: from its merchant's id, name and fee (kobo), or null for an app escrow. */
export const merchantOf = (e: Pick<EscrowRow, 'merchant_id' | 'merchant_fee' | 'merchant_name'>) =>
  e.merchant_id === null
    ? null
    : { id: e.merchant_id, name: e.merchant_name as string, fee: toNaira(e.merchant_fee ?? 0) };

/**
 * The escrow as `callerId` (one of its parties) sees it. To the initiator, counterparty_id is null
 * until the counterparty has accepted or declined, whether or not the phone has an account; the
 * counterparty can only be reading it because it is linked to them, so theirs is their own id.
 */
export function escrowView(e: EscrowRow, callerId: string): EscrowResponse;
export function escrowView(
  e: EscrowRow & { conversation_id: string },
  callerId: string,
  opts: { withConversation: true },
): EscrowListItemResponse;
export function escrowView(e: EscrowRow, callerId: string, opts: { withConversation?: boolean } = {}) {
  const fields = {
    ...e,
    counterparty_id: e.initiator_id === callerId ? e.revealed_counterparty_id : callerId,
    // whole to the initiator, who typed it; masked to anyone else (private.mask_phone)
    counterparty_phone: e.initiator_id === callerId ? e.counterparty_phone : maskPhone(e.counterparty_phone),
    amount: toNaira(e.amount),
    fee_breakdown: feeBreakdownView({
      escrow_amount: Number(e.amount),
      payer_fee: Number(e.payer_fee),
      vat: Number(e.vat),
      total_charge: Number(e.total_charge),
      seller_fee: Number(e.seller_fee),
      // the stored payout is before the merchant's fee; the breakdown's is after it
      merchant_fee: Number(e.merchant_fee ?? 0),
      seller_payout: Number(e.seller_payout) - Number(e.merchant_fee ?? 0),
    }),
    released_amount: toNaira(e.released_amount),
    merchant: merchantOf(e),
  };
  return opts.withConversation
    ? answerOf(escrowListItemResponse, { ...fields, conversation_id: e.conversation_id })
    : answerOf(escrowResponse, fields);
}

/** A phone as shown to anyone but the escrow's initiator: +2348*******78 (private.mask_phone does the same). */
export const maskPhone = (phone: string): string =>
  /^\+234[0-9]{10}$/.test(phone) ? `${phone.slice(0, 5)}*******${phone.slice(-2)}` : phone;

function escrowOrNotFound(row: EscrowRow | undefined, callerId: string) {
  if (!row) throw ESCROW_NOT_FOUND.error({});
  return escrowView(row, callerId);
}

/** 3600 -> "60 minutes", 45 -> "45 seconds", 7300 -> "2 hours 2 minutes". */

/** After a transition that queued SMS (an invitation): they go out now; the job retries failures. */
const sendQueuedSms = () => afterCommit('sms.dispatch', () => dispatchQueuedSmsSoon());

const hashInviteToken = (token: string) => sha256Hex(`invite:${token}`);

/**
 * The invite token of an escrow created under an Idempotency-Key: derived from the creator and
 * the key under a server secret, so that the answer stored with the key can leave the token out
 * (only its hash is kept) and a replay still answers the same token.
 */
export async function inviteTokenFor(userId: string, key: string): Promise<string> {
  const mac = await hmacHex('SHA-256', getConfig().AUTH_JWT_SECRET, `escrow-invite-token\n${userId}\n${key}`);
  return base64url(Uint8Array.from(mac.slice(0, 48).match(/../g) as string[], (h) => parseInt(h, 16)));
}

export async function escrowCreate(
  user: AuthUser,
  input: {
    category: string;
    payer_role: string;
    title: string;
    counterparty_phone: string;
    amount: number;
    description?: string;
  },
) {
  if (input.counterparty_phone === user.phone) {
    throw COUNTERPARTY_IS_SELF.error({});
  }
  const key = currentKeyClaim()?.key;
  const inviteToken = key === undefined ? base64url(randomBytes(24)) : await inviteTokenFor(user.id, key);
  const inviteTokenHash = await hashInviteToken(inviteToken);
  const c = getConfig();
  const outcome = await asService(async (tx) => {
    // An escrow the counterparty pays invites them by SMS at once, before any money: those are
    // limited per initiator. The limit is taken in this transaction, so nothing is created when
    // it refuses, and a creation that fails gives its unit back (the rollback removes it).
    if (input.payer_role === 'counterparty') {
      const rules = [
        { key: `invite:hour:${user.id}`, limit: c.INVITE_MAX_PER_HOUR, window_seconds: 3600 },
        { key: `invite:day:${user.id}`, limit: c.INVITE_MAX_PER_DAY, window_seconds: 86_400 },
      ];
      const [limit] = await tx<{ wait: number }[]>`select private.rate_limit_take(${tx.json(rules)}) as wait`;
      const wait = Number(limit?.wait ?? 0);
      if (wait > 0) return { wait, created: null, fees: null };
      // and so is every invite SMS of the initiator's, whoever pays (INVITE_SMS_MAX_PER_INITIATOR_PER_DAY):
      // an escrow the counterparty pays exists to invite them, so over that cap it is not created.
      // The key stays locked to the commit; private.queue_invite_sms takes the unit.
      const [sms] = await tx<{ wait: number }[]>`select private.invite_sms_initiator_wait(${user.id}) as wait`;
      const smsWait = Number(sms?.wait ?? 0);
      if (smsWait > 0) return { wait: smsWait, created: null, fees: null };
    }
    const [schedule] = await tx<FeeSchedule[]>`
      select fee_bps, min_fee::int, max_fee::int, payer_share_bps, vat_bps from private.fee_schedules where category = ${input.category}`;
    // every category is seeded with one (the escrows migration); none would be a broken database
    if (!schedule) throw new Error(`private.fee_schedules has no row for ${input.category}`);
    const fees = feeBreakdown(input.amount, schedule);
    const [created] = await tx<{ escrow_id: string; conversation_id: string }[]>`
      select * from private.escrow_create(${user.id}, ${input.category}, ${input.payer_role}, ${input.title},
        ${input.description ?? ''}, ${input.counterparty_phone}, ${input.amount}, ${fees.payer_fee}, ${fees.vat},
        ${fees.seller_fee}, ${inviteTokenHash})`;
    return { wait: 0, created: created as { escrow_id: string; conversation_id: string }, fees };
  });
  if (!outcome.created || !outcome.fees) {
    throw RATE_LIMITED.error(
      {
        message: `Too many invitations: you can create another escrow that the other party pays in ${
          describeWait(outcome.wait)
        }`,
      },
      { headers: retryAfterHeader(outcome.wait) },
    );
  }
  // an escrow the counterparty pays queued its invitation SMS
  if (input.payer_role === 'counterparty') await sendQueuedSms();
  return {
    escrow_id: outcome.created.escrow_id,
    conversation_id: outcome.created.conversation_id,
    invite_token: inviteToken,
    fee_breakdown: feeBreakdownView(outcome.fees),
  };
}

/**
 * The escrow columns a view needs, as SQL (qualified by the alias when asked), and its merchant's
 * name (reads.escrow_merchant_name: the merchants' table is not the caller's to read).
 */
const escrowColumns = (alias?: string) =>
  `${selectList(ESCROW_COLUMNS, { alias })}, case when ${alias ? `${alias}.` : ''}merchant_id is null then null ` +
  `else reads.escrow_merchant_name(${alias ? `${alias}.` : ''}id) end as merchant_name`;

/** The escrow as the caller sees it (row-level security), in one round trip. */
export async function escrowGet({ claims }: AuthUser, id: string) {
  const [[row]] = await readAsUser(claims, (tx) => [
    sqlText<EscrowRow[]>(tx, `select ${escrowColumns()} from public.escrows where id = ${sqlLiteral(id)}::uuid`),
  ]);
  return escrowOrNotFound(row, claims.sub);
}

/** The caller's escrows, a page of them newest first, as Postgres writes them (reads.escrow_list). */
export async function escrowList(
  { claims }: AuthUser,
  q: { status?: string; limit: number; before?: string },
): Promise<JsonText<EscrowListItemResponse[]>> {
  const [[row]] = await readAsUser(claims, (tx) => [
    sqlText<{ body: string }[]>(
      tx,
      `select reads.escrow_list(${sqlLiteral(q.status ?? null)}, ${sqlLiteral(q.before ?? null)}::timestamptz, ${
        sqlLiteral(q.limit)
      }) as body`,
    ),
  ]);
  return new JsonText((row as { body: string }).body);
}

/**
 * The same page built here from the rows: what the test of the reads Postgres builds
 * (tests/integration/reads-built.test.ts) compares escrowList's text with.
 */
export async function escrowListAsObjects(
  { claims }: AuthUser,
  q: { status?: string; limit: number; before?: string },
) {
  // the caller's escrows, on either side: row-level security keeps exactly those; composed as text
  // (every value a literal), so the read goes out as one message (shared/core/db.ts)
  const where = (q.status ? `e.status = ${sqlLiteral(q.status)}` : `e.status <> 'deleted'`) +
    (q.before ? ` and e.created_at < ${sqlLiteral(q.before)}::timestamptz` : '');
  const [rows] = await readAsUser(claims, (tx) => [
    sqlText<(EscrowRow & { conversation_id: string })[]>(
      tx,
      `select ${escrowColumns('e')}, c.id as conversation_id
         from public.escrows e join public.conversations c on c.escrow_id = e.id
        where ${where}
        order by e.created_at desc
        limit ${sqlLiteral(q.limit)}`,
    ),
  ]);
  return rows.map((r) => escrowView(r, claims.sub, { withConversation: true }));
}

/** Resolves an accept/decline target: the escrow id, or the escrow the invite token belongs to. */
async function inviteTarget(input: { escrow_id?: string; invite_token?: string }): Promise<string> {
  if (input.escrow_id) return input.escrow_id;
  const hash = await hashInviteToken(input.invite_token as string);
  const [row] = await asService((tx) =>
    tx<{ id: string }[]>`select id from public.escrows where invite_token_hash = ${hash}`
  );
  if (!row) {
    throw ESCROW_NOT_FOUND.error({}, { details: [{ field: 'invite_token', message: 'does not match any escrow' }] });
  }
  return row.id;
}

/**
 * Runs one transition function (one statement, written with `inline`: BEGIN, the setup, the call
 * and COMMIT go out together), then `after` (what follows its commit, through afterCommit), and
 * answers with the escrow as it now is.
 */
async function transition<R extends postgres.Row[]>(
  user: AuthUser,
  escrowId: string,
  call: (sql: ReturnType<typeof inline>) => postgres.PendingQuery<R>,
  after?: (result: postgres.RowList<R>) => Promise<void>,
) {
  const [result] = await callAsService((tx) => [call(inline(tx))]);
  if (after) await after(result);
  return escrowGet(user, escrowId);
}

export async function escrowAccept(user: AuthUser, input: { escrow_id?: string; invite_token?: string }) {
  const id = await inviteTarget(input);
  return transition(user, id, (sql) => sql`select private.escrow_accept(${id}, ${user.id})`);
}

/** After a transition that may have given money back: a merchant escrow's refund sent to the provider. */
const sendRefunds = (escrowId: string) => () => afterCommit('escrow.refund', () => startRefundsOf({ escrowId }));

export async function escrowDecline(user: AuthUser, input: { escrow_id?: string; invite_token?: string }) {
  const id = await inviteTarget(input);
  return transition(user, id, (sql) => sql`select private.escrow_decline(${id}, ${user.id})`, sendRefunds(id));
}

export const escrowCancel = (user: AuthUser, id: string) =>
  transition(user, id, (sql) => sql`select private.escrow_cancel(${id}, ${user.id})`, sendRefunds(id));
export const escrowDelete = (user: AuthUser, id: string) =>
  transition(user, id, (sql) => sql`select private.escrow_delete(${id}, ${user.id})`);
export const escrowDeliver = (user: AuthUser, id: string) =>
  transition(user, id, (sql) => sql`select private.escrow_deliver(${id}, ${user.id}, now())`);
export const escrowRefund = (user: AuthUser, id: string) =>
  transition(user, id, (sql) => sql`select private.escrow_refund(${id}, ${user.id})`, sendRefunds(id));
export const escrowRelease = (user: AuthUser, id: string) =>
  transition(
    user,
    id,
    (sql) =>
      sql<{ payout_tx: string | null }[]>`select payout_tx from private.escrow_release(${id}, ${user.id}, now())`,
    async ([r]) => {
      const payoutTx = r?.payout_tx;
      if (payoutTx) await afterCommit('escrow.payout', () => startEscrowPayout(payoutTx));
    },
  );

/** What escrow-fund takes: the escrow, how it is paid, and for a card the saved card or the page's return. */
interface FundInput {
  escrow_id: string;
  method: 'wallet' | 'card' | 'saved_card' | 'bank_transfer';
  card_id?: string;
  callback_url?: string;
}

export async function escrowFund(user: AuthUser, input: FundInput): Promise<EscrowFundResponse> {
  if (input.method === 'wallet') return await fundFromWallet(user, input.escrow_id);
  if (input.method === 'bank_transfer') return await fundByBankTransfer(user, input.escrow_id);
  return await fundByCard(user, input);
}

/**
 * From the wallet, at once: the escrow as it now is. The SQL refuses with its facts (a wallet short
 * of the total charge: insufficient_funds; below the identity floor or over a KYC limit), worded by
 * the endpoint's declared refusals.
 */
function fundFromWallet(user: AuthUser, id: string): Promise<EscrowFundResponse> {
  return transition(
    user,
    id,
    (sql) =>
      sql<
        { status: 'active' | 'funded' }[]
      >`select private.escrow_fund_wallet_request(${id}, ${user.id}) as status`,
    // a draft that became active (the initiator paid) queued its invitation SMS
    async ([r]) => {
      if (r?.status === 'active') await sendQueuedSms();
    },
  );
}

/** By bank transfer: the escrow waits for it, and the answer names the payer's virtual account. */
async function fundByBankTransfer(user: AuthUser, id: string): Promise<EscrowFundResponse> {
  // The escrow's checks come first (a stranger 404, the payee 403, a wrong state 409), then the
  // account; without an active one the whole transaction, and so the waiting mark, rolls back.
  const va = await asService(async (tx) => {
    await tx`select private.escrow_await_bank_transfer(${id}, ${user.id})`;
    const [row] = await tx<
      { status: string; account_number: string | null; account_name: string | null; bank_name: string | null }[]
    >`
      select status, account_number, account_name, bank_name from public.virtual_accounts where user_id = ${user.id}`;
    if (!row || row.status !== 'active') {
      throw VIRTUAL_ACCOUNT_REQUIRED.error({});
    }
    return row;
  });
  const escrow = await escrowGet(user, id);
  return {
    escrow_id: id,
    status: 'awaiting_bank_transfer',
    amount: escrow.fee_breakdown.total_charge,
    virtual_account: { account_number: va.account_number, account_name: va.account_name, bank_name: va.bank_name },
  };
}

/** By card or saved card: a pending funding transaction whose id is the charge reference. */
async function fundByCard(user: AuthUser, input: FundInput): Promise<EscrowFundResponse> {
  const id = input.escrow_id;
  const authorizationCode = input.card_id ? await savedCardAuthorization(user.id, input.card_id) : undefined;
  const { id: reference, amount } = await asService(async (tx) => {
    const [created] = await tx<{ id: string }[]>`
      select private.escrow_charge_create(${id}, ${user.id}, ${payments().name}, ${input.method}) as id`;
    const [row] = await tx<{ id: string; amount: string }[]>`
      select id, amount::text from public.transactions where id = ${(created as { id: string }).id}`;
    return row as { id: string; amount: string };
  });
  const started = await startCharge({
    reference,
    amountKobo: Number(amount),
    userId: user.id,
    metadata: { kind: 'escrow_charge', transaction_id: reference, escrow_id: id, user_id: user.id },
    authorizationCode,
    callbackUrl: input.callback_url,
    markFailed: (reason) => asService((tx) => tx`select private.escrow_charge_fail(${reference}, ${reason})`),
  });
  return {
    escrow_id: id,
    transaction_id: reference,
    reference,
    amount: toNaira(amount),
    status: 'pending',
    ...started,
  };
}
