// Merchant escrows (docs/merchants.md#merchant-escrows), for a merchant's key: merchant-escrow-create
// (with the buyer's checkout), merchant-escrow-get, merchant-escrow-list, merchant-escrow-cancel and
// merchant-escrow-deliver. Each write is one SQL function (the merchant escrows and merchant funding
// migrations) given the key's merchant; each
// read runs as service_role and keeps the merchant's own escrows in its WHERE clause, so another
// merchant's escrow is not found (404), never forbidden.
import { Reply } from '../core/endpoint.ts';
import { afterCommit } from '../core/background.ts';
import { getConfig } from '../core/config.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { RATE_LIMITED } from '../core/refusals.ts';
import { hmacHex, sha256Hex } from '../core/crypto.ts';
import { asService, callAsService, inline, sqlLiteral, sqlText } from '../core/db.ts';
import { answerOf, selectList } from '../core/rows.ts';
import { ESCROW_COLUMNS, type EscrowRow, escrowView } from '../escrow/escrow.ts';
import { feeBreakdown, type FeeSchedule } from '../escrow/fees.ts';
import { ESCROW_NOT_FOUND } from '../escrow/refusals.ts';
import { dispatchQueuedSmsSoon } from '../messages/sms-outbox.ts';
import { payments } from '../money/payments/index.ts';
import { startCharge } from '../money/payments/charge.ts';
import type { CheckoutChannel } from '../money/payments/provider.ts';
import type { MerchantCaller } from './key-auth.ts';
import { MERCHANT_PARTY_IS_OWNER } from './refusals.ts';
import { type MerchantEscrowCreateBody, type MerchantEscrowResponse, merchantEscrowResponse } from './escrow-schema.ts';

/** A merchant escrow's row: the escrow as a party's view reads it, its seller and the merchant's own fields. */
type MerchantEscrowRow = EscrowRow & {
  counterparty_id: string;
  reference: string;
  /** the metadata's text as the merchant sent it */
  metadata: string | null;
  checkout_url: string | null;
  tracking: { carrier: string; number: string; url?: string } | null;
};

/** The ways the buyer may pay at the checkout. */
const CHECKOUT_CHANNELS: readonly CheckoutChannel[] = ['card', 'bank_transfer', 'ussd'];

/** JSON with every object's keys in order: the same body gives the same text, whatever order it was sent in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The statement that reads a merchant's escrows: `where` over e (the escrow) and me (the merchant's row). */
const readStatement = (merchantId: string, where: string, tail = '') =>
  `select ${selectList(ESCROW_COLUMNS, { alias: 'e' })}, e.counterparty_id, m.name as merchant_name,
          me.reference, me.metadata::text as metadata,
          case when e.status = 'draft' and e.funded_at is null then me.checkout_url end as checkout_url, me.tracking
     from public.escrows e
     join private.merchant_escrows me on me.escrow_id = e.id
     join private.merchants m on m.id = e.merchant_id
    where e.merchant_id = ${sqlLiteral(merchantId)}::uuid and ${where} ${tail}`;

/**
 * A party's id as one merchant knows it: a UUID (version 8) from an HMAC of the merchant's id and
 * the party's user id under a server secret. The same customer has the same id in all of the
 * merchant's escrows, and nothing else: a user id would name the account elsewhere
 * (profile-public-get answers a name for an account and 404 for a placeholder), so a merchant
 * naming any phone as a party would learn whether it has an account, and whose it is.
 */
export async function merchantPartyId(merchantId: string, userId: string): Promise<string> {
  const h = (await hmacHex('SHA-256', getConfig().AUTH_JWT_SECRET, `merchant-party\n${merchantId}\n${userId}`))
    .slice(0, 32)
    .split('');
  h[12] = '8'; // version 8: custom
  h[16] = '89ab'[parseInt(h[16] as string, 16) & 3] as string; // the RFC 9562 variant
  const x = h.join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The escrow as its merchant reads it: both parties' ids as this merchant knows them (merchantPartyId). */
async function merchantView(row: MerchantEscrowRow): Promise<MerchantEscrowResponse> {
  // read as by the counterparty, the view's counterparty_id is the stored one
  const escrow = escrowView(row, row.counterparty_id);
  const merchantId = row.merchant_id as string;
  return answerOf(merchantEscrowResponse, {
    ...escrow,
    // the merchant named its customer's phone: it sees it whole
    counterparty_phone: row.counterparty_phone,
    initiator_id: await merchantPartyId(merchantId, row.initiator_id),
    counterparty_id: await merchantPartyId(merchantId, row.counterparty_id),
    reference: row.reference,
    metadata: row.metadata === null ? null : JSON.parse(row.metadata),
    checkout_url: row.checkout_url,
    tracking: row.tracking,
  });
}

async function readOne(merchantId: string, where: string): Promise<MerchantEscrowResponse> {
  const [[row]] = await callAsService((tx) => [sqlText<MerchantEscrowRow[]>(tx, readStatement(merchantId, where))]);
  if (!row) throw ESCROW_NOT_FOUND.error({});
  return await merchantView(row);
}

/** One of a merchant's escrows as merchant-escrow-get answers it, or null when it is not theirs. */
export async function merchantEscrowOf(merchantId: string, escrowId: string): Promise<MerchantEscrowResponse | null> {
  const [[row]] = await callAsService((tx) => [
    sqlText<MerchantEscrowRow[]>(tx, readStatement(merchantId, `e.id = ${sqlLiteral(escrowId)}::uuid`)),
  ]);
  return row ? await merchantView(row) : null;
}

/** merchant-escrow-get: one of the caller's escrows, by id or by reference. */
export const merchantEscrowGet = (caller: MerchantCaller, q: { escrow_id?: string; reference?: string }) =>
  readOne(
    caller.merchantId,
    q.escrow_id !== undefined
      ? `e.id = ${sqlLiteral(q.escrow_id)}::uuid`
      : `me.reference = ${sqlLiteral(q.reference as string)}`,
  );

/** merchant-escrow-list: a page of the caller's escrows, newest first. */
export async function merchantEscrowList(
  caller: MerchantCaller,
  q: { status?: string; limit: number; before?: string },
): Promise<MerchantEscrowResponse[]> {
  const where = (q.status ? `e.status = ${sqlLiteral(q.status)}` : `e.status <> 'deleted'`) +
    (q.before ? ` and e.created_at < ${sqlLiteral(q.before)}::timestamptz` : '');
  const [rows] = await callAsService((tx) => [
    sqlText<MerchantEscrowRow[]>(
      tx,
      readStatement(caller.merchantId, where, `order by e.created_at desc limit ${sqlLiteral(q.limit)}`),
    ),
  ]);
  return await Promise.all(rows.map(merchantView));
}

/**
 * merchant-escrow-create: a draft escrow between the buyer (initiator, payer) and the seller (201),
 * or the escrow already made for this reference with the same body (200), with the checkout page
 * where the buyer pays. The escrow and its charge (within the owner's limits) are one transaction:
 * over a limit, nothing is created.
 */
export async function merchantEscrowCreate(
  caller: MerchantCaller,
  body: MerchantEscrowCreateBody,
): Promise<Reply<MerchantEscrowResponse>> {
  const c = getConfig();
  const bodyHash = await sha256Hex(canonicalJson(body));
  const outcome = await asService(async (tx) => {
    // the owner is never a party: a party reads the other's user id (escrow-get), so the owner as
    // seller would learn it for any phone named as buyer
    const [owner] = await tx<{ phone: string }[]>`select phone from private.users where id = ${caller.ownerId}`;
    for (const field of ['seller_phone', 'buyer_phone'] as const) {
      if (body[field] === owner?.phone) throw MERCHANT_PARTY_IS_OWNER.error({ field });
    }
    const [schedule] = await tx<FeeSchedule[]>`
      select fee_bps, min_fee::int, max_fee::int, payer_share_bps, vat_bps from private.fee_schedules where category = ${body.category}`;
    // every category is seeded with one (the escrows migration); none would be a broken database
    if (!schedule) throw new Error(`private.fee_schedules has no row for ${body.category}`);
    const fees = feeBreakdown(body.amount, schedule);
    const [row] = await tx<{ escrow_id: string; created: boolean }[]>`
      select escrow_id, created from private.merchant_escrow_create(${caller.merchantId}, ${body.reference},
        ${bodyHash}, ${body.category}, ${body.title}, ${body.description ?? ''}, ${body.amount}, ${fees.payer_fee},
        ${fees.vat}, ${fees.seller_fee}, ${body.buyer_phone}, ${body.seller_phone}, ${body.merchant_fee ?? 0},
        ${
      body.metadata === undefined ? null : JSON.stringify(body.metadata)
    }::text::json, ${c.MERCHANT_SMS_MAX_PER_HOUR},
        ${c.MERCHANT_SMS_MAX_PER_DAY})`;
    const { escrow_id, created } = row as { escrow_id: string; created: boolean };
    const [charge] = await tx<{ transaction_id: string; amount: string; checkout_url: string | null }[]>`
      select transaction_id, amount::text, checkout_url
        from private.merchant_escrow_checkout(${escrow_id}, ${caller.merchantId}, ${payments().name})`;
    // a request that will ask the provider for a checkout (a new escrow, or a replay after the
    // provider could not start one) takes a unit of the merchant's hourly limit; a replay answering
    // the page it has takes none. Over the limit the whole transaction is rolled back: nothing
    // created, no charge made, no checkout asked for
    if (created || (charge !== undefined && charge.checkout_url === null)) {
      const rules = [{
        key: `merchant_escrow:hour:${caller.merchantId}`,
        limit: c.MERCHANT_ESCROW_MAX_PER_HOUR,
        window_seconds: 3600,
      }];
      const [limit] = await tx<{ wait: number }[]>`select private.rate_limit_take(${tx.json(rules)}) as wait`;
      const wait = Number(limit?.wait ?? 0);
      if (wait > 0) {
        throw RATE_LIMITED.error(
          { message: `Too many checkouts started this hour, try again in ${describeWait(wait)}` },
          { headers: retryAfterHeader(wait) },
        );
      }
    }
    return { escrow_id, created, charge };
  });
  // a new escrow queued its parties' SMS: they go out now; the job retries failures
  if (outcome.created) await afterCommit('sms.dispatch', () => dispatchQueuedSmsSoon());
  if (outcome.charge && outcome.charge.checkout_url === null) await startCheckout(outcome.escrow_id, outcome.charge);
  const escrow = await readOne(caller.merchantId, `e.id = ${sqlLiteral(outcome.escrow_id)}::uuid`);
  return new Reply(outcome.created ? 201 : 200, escrow);
}

/**
 * The provider's hosted checkout for the buyer's charge (its reference: the pending transaction's
 * id), kept with the escrow for the request's replays. One request at a time per escrow asks the
 * provider (the escrow's merchant row held while it does), so concurrent replays wait and answer
 * the page the first one kept instead of asking again with the same reference. A refusal or no
 * answer marks the charge failed (nothing can have been paid on a page nobody got) and is the
 * request's answer; a replay then starts a new charge.
 */
async function startCheckout(escrowId: string, charge: { transaction_id: string; amount: string }) {
  const reference = charge.transaction_id;
  const buyer = await buyerOf(escrowId);
  let failure: unknown = null;
  await asService(async (tx) => {
    const [row] = await tx<{ checkout_tx: string | null; checkout_url: string | null }[]>`
      select checkout_tx, checkout_url from private.merchant_escrows where escrow_id = ${escrowId} for update`;
    // another request kept this charge's page meanwhile, or started another charge
    if (!row || row.checkout_url !== null || row.checkout_tx !== reference) return;
    try {
      const started = await startCharge({
        reference,
        amountKobo: Number(charge.amount),
        userId: buyer,
        metadata: { kind: 'escrow_charge', transaction_id: reference, escrow_id: escrowId },
        channels: CHECKOUT_CHANNELS,
        markFailed: (reason) => tx`select private.escrow_charge_fail(${reference}, ${reason})`,
      });
      await tx`
        select private.merchant_escrow_checkout_started(${escrowId}, ${reference}, ${started.authorization_url})`;
    } catch (err) {
      // committed with the charge marked failed; the refusal is the answer
      failure = err;
    }
  });
  if (failure !== null) throw failure;
}

async function buyerOf(escrowId: string): Promise<string> {
  const [row] = await asService((tx) =>
    tx<{ initiator_id: string }[]>`select initiator_id from public.escrows where id = ${escrowId}`
  );
  return (row as { initiator_id: string }).initiator_id;
}

/** merchant-escrow-cancel: cancels one of the caller's escrows before it is funded. */
export async function merchantEscrowCancel(caller: MerchantCaller, body: { escrow_id: string }) {
  await callAsService((tx) => [
    inline(tx)`select private.merchant_escrow_cancel(${body.escrow_id}, ${caller.merchantId})`,
  ]);
  return readOne(caller.merchantId, `e.id = ${sqlLiteral(body.escrow_id)}::uuid`);
}

/** merchant-escrow-deliver: records the delivery of one of the caller's funded escrows, with its tracking. */
export async function merchantEscrowDeliver(
  caller: MerchantCaller,
  body: { escrow_id: string; tracking?: { carrier: string; number: string; url?: string } },
) {
  await asService((tx) =>
    tx`select private.merchant_escrow_deliver(${body.escrow_id}, ${caller.merchantId},
         ${body.tracking === undefined ? null : tx.json(body.tracking)}, now())`
  );
  return readOne(caller.merchantId, `e.id = ${sqlLiteral(body.escrow_id)}::uuid`);
}
