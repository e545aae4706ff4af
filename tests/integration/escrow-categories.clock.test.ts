// Category rules and the time-driven transitions through the real server: goods_products'
// one-day inspection ending in an automatic release, hiring's manual release, auto_dealership's
// release after the dealer's delivery, p2p_crypto's release on approval, released/refunded
// escrows ending 14 days later, and the payout to the payee's bank settled by transfer webhooks.
//
// Time is moved by editing this test's own escrow rows far into the past (about three years) and
// running the job at explicit instants back then. The job is global, so its instants are kept
// where no other suite's deadlines are: it releases or ends nothing but these rows.
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectStatus, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { kobo } from '../support/money.ts';
import { notes } from '../support/notifications.ts';
import { type Deal, escrowOp, escrowStatus, fundedDeal, newDeal } from '../support/escrows.ts';
import { balances, holdKobo, walletKobo } from '../support/ledger.ts';
import { runJobs } from '../support/clock.ts';
import { paystack } from '../support/paystack.ts';
import { raiseTier } from '../support/kyc.ts';
import type { TestUser } from '../support/users.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const DAY = 86_400_000;

async function job(at: Date) {
  const r = await runJobs(at.toISOString());
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { released: number; ended: number; payouts_started: number };
}

/** A whole second some days before a point about three years ago (instants derived from it are exact). */
const FAR_PAST_DAYS = 1_100;
const pastInstant = (daysAgo: number) =>
  new Date(Math.floor((Date.now() - (FAR_PAST_DAYS + daysAgo) * DAY) / 1000) * 1000);

/** Moves this escrow's delivery (and so its inspection period) to start at `deliveredAt`. */
async function setDelivery(escrowId: string, deliveredAt: Date) {
  await testDb()`
    update public.escrows
       set delivered_at = ${deliveredAt.toISOString()}::timestamptz,
           inspection_ends_at = ${deliveredAt.toISOString()}::timestamptz + make_interval(days => inspection_period_days)
     where id = ${escrowId} and status = 'inspection'`;
}

async function setClosedAt(escrowId: string, at: Date) {
  await testDb()`
    update public.escrows
       set released_at = case when status = 'released' then ${at.toISOString()}::timestamptz end,
           refunded_at = case when status = 'refunded' then ${at.toISOString()}::timestamptz end
     where id = ${escrowId}`;
}

const escrowTimes = async (id: string) => {
  const [row] = await testDb()<
    {
      delivered_at: Date | null;
      inspection_ends_at: Date | null;
      released_at: Date | null;
      ended_at: Date | null;
      exact_day: boolean | null;
    }[]
  >`
    select delivered_at, inspection_ends_at, released_at, ended_at, inspection_ends_at - delivered_at = interval '1 day' as exact_day
      from public.escrows where id = ${id}`;
  return row!;
};

/** A default payout account for the user, with the name the fake bank confirms. */
/**
 * A default payout account for `user`, raised to tier 1 (tests/support/kyc.ts) so that releases are
 * paid out: below the identity floor a release stays in the wallet.
 */
async function addPayout(user: TestUser): Promise<string> {
  expect(await raiseTier(user.id, 1)).toBe(1);
  const number = `3${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
  await paystack.registerAccount('058', number, 'ADA OBI');
  const res = await post(payoutAdd, {
    bank_code: '058',
    bank_name: 'GTBank',
    account_number: number,
    account_name: 'Ada Obi',
  }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data).toMatchObject({ is_default: true });
  return number;
}

const payoutTxs = (escrowId: string) =>
  testDb()<{ id: string; user_id: string; status: string; amount: string; provider_transfer_id: string | null }[]>`
    select id, user_id, status::text, amount::text, provider_transfer_id from public.transactions
     where escrow_id = ${escrowId} and type = 'escrow_payout' order by created_at`;

// ---- goods_products ------------------------------------------------------------------------------

describe('goods_products: delivery opens a 1-day inspection that ends in an automatic release', () => {
  it('deliver -> inspection with inspection_ends_at = delivered_at + 1 day; the job releases only once it has passed', async () => {
    const deal = await fundedDeal({ category: 'goods_products', amount: 10_000 });
    const res = await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data.status).toBe('inspection');
    expect(Date.parse(res.body.data.inspection_ends_at) - Date.parse(res.body.data.delivered_at)).toBe(DAY);
    expect((await escrowTimes(deal.escrowId)).exact_day).toBe(true);
    expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'delivered')).toHaveLength(1);

    // move the delivery three days back, then run the job just before and just after the end
    const deliveredAt = pastInstant(3);
    await setDelivery(deal.escrowId, deliveredAt);
    const ends = new Date(deliveredAt.getTime() + DAY);
    expect((await escrowTimes(deal.escrowId)).inspection_ends_at?.getTime()).toBe(ends.getTime());
    const total = kobo(deal.feeBreakdown.total_charge);

    await job(new Date(ends.getTime() - 1000));
    expect(await escrowStatus(deal)).toBe('inspection');
    expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });

    const ran = await job(ends);
    expect(ran.released).toBeGreaterThanOrEqual(1);
    const got = await get(escrowGet, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } });
    expect(got.body.data.status).toBe('released');
    expect(Date.parse(got.body.data.released_at!)).toBe(ends.getTime());
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
    const payerNote = (await notes(deal.payer, deal.escrowId)).find((n) => n.event_type === 'released');
    expect(payerNote?.content).toMatch(/automatically/);
    expect((await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'released')).toHaveLength(1);

    // running the job again releases nothing twice
    await job(new Date(ends.getTime() + 1000));
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
    expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
  });

  it('the buyer can release during the inspection period', async () => {
    const deal = await fundedDeal({ category: 'goods_products' });
    expectStatus(await escrowOp('escrow-deliver', deal.payee, deal.escrowId), 200);
    expectStatus(await escrowOp('escrow-release', deal.payee, deal.escrowId), 403);
    const res = await escrowOp('escrow-release', deal.payer, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data.status).toBe('released');
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
    // once its inspection period is over, the job finds nothing left to release
    const deliveredAt = pastInstant(4);
    await testDb()`
      update public.escrows set delivered_at = ${deliveredAt.toISOString()}::timestamptz,
             inspection_ends_at = ${deliveredAt.toISOString()}::timestamptz + interval '1 day'
       where id = ${deal.escrowId}`;
    await job(new Date(deliveredAt.getTime() + DAY + 1000));
    expect(await escrowStatus(deal)).toBe('released');
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
    expect((await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'released')).toHaveLength(1);
  });

  it('the buyer can also release before delivery (funded)', async () => {
    const deal = await fundedDeal({ category: 'goods_products' });
    expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 200);
    expect(await escrowStatus(deal)).toBe('released');
  });
});

// ---- hiring ----------------------------------------------------------------------------------

describe('hiring: manual release only', () => {
  it('deliver records the delivery and keeps it funded; the job never releases it', async () => {
    const deal = await fundedDeal({ category: 'hiring' });
    const res = await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data).toMatchObject({ status: 'funded', inspection_ends_at: null });
    expect(res.body.data.delivered_at).not.toBeNull();
    // delivery a week ago: still nothing for the job to do
    const deliveredAt = pastInstant(7);
    await testDb()`update public.escrows set delivered_at = ${deliveredAt.toISOString()}::timestamptz where id = ${deal.escrowId}`;
    await job(new Date(deliveredAt.getTime() + 7 * DAY));
    expect(await escrowStatus(deal)).toBe('funded');
    expect(await holdKobo(deal.escrowId)).toBe(kobo(deal.feeBreakdown.total_charge));
    expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 200);
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
  });

  it('the client can release any time it is funded, delivered or not', async () => {
    const deal = await fundedDeal({ category: 'hiring', payerRole: 'counterparty' });
    expectStatus(await escrowOp('escrow-release', deal.payee, deal.escrowId), 403);
    const res = await escrowOp('escrow-release', deal.payer, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data.status).toBe('released');
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
  });
});

// ---- auto_dealership -------------------------------------------------------------------------

describe("auto_dealership: the buyer releases by confirming the dealer's delivery", () => {
  it('release before delivery is 409 and moves nothing; after the dealer delivers it is 200', async () => {
    const deal = await fundedDeal({ category: 'auto_dealership', amount: 2_500_000 });
    const total = kobo(deal.feeBreakdown.total_charge);
    const early = await escrowOp('escrow-release', deal.payer, deal.escrowId);
    expectStatus(early, 409);
    expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
    expect(await escrowStatus(deal)).toBe('funded');

    const delivered = await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
    expectStatus(delivered, 200);
    expect(delivered.body.data.status).toBe('funded');

    const res = await escrowOp('escrow-release', deal.payer, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data.status).toBe('released');
    // the platform fee is capped at NGN 20,000, split between the parties
    expect(deal.feeBreakdown).toMatchObject({ payer_fee: 10_000, seller_fee: 10_000, vat: 750 });
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
  });

  it('the dealer may still refund before delivery', async () => {
    const deal = await fundedDeal({ category: 'auto_dealership' });
    expectStatus(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 200);
    expect(await balances(deal)).toEqual({ payer: kobo(deal.feeBreakdown.total_charge), payee: 0, hold: 0 });
  });
});

// ---- p2p_crypto ------------------------------------------------------------------------------

describe('p2p_crypto: the sender releases on approval', () => {
  it('releases without any delivery', async () => {
    const deal = await fundedDeal({ category: 'p2p_crypto', amount: 50_000 });
    const res = await escrowOp('escrow-release', deal.payer, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data).toMatchObject({ status: 'released' });
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
  });
});

// ---- 14 days after: ended ----------------------------------------------------------------------

describe('released / refunded -> ended, 14 days later', () => {
  it('a released escrow ends when the job runs 14 days after the release, not at 13 days', async () => {
    const deal = await fundedDeal({ category: 'p2p_crypto' });
    expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 200);
    const releasedAt = pastInstant(30);
    await setClosedAt(deal.escrowId, releasedAt);

    await job(new Date(releasedAt.getTime() + 13 * DAY));
    expect(await escrowStatus(deal)).toBe('released');
    await job(new Date(releasedAt.getTime() + 14 * DAY - 1000));
    expect(await escrowStatus(deal)).toBe('released');

    const at = new Date(releasedAt.getTime() + 14 * DAY);
    const ran = await job(at);
    expect(ran.ended).toBeGreaterThanOrEqual(1);
    expect(await escrowStatus(deal)).toBe('ended');
    expect((await escrowTimes(deal.escrowId)).ended_at?.getTime()).toBe(at.getTime());
    // nothing moved; nothing more can happen to it
    expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
    expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
    expectStatus(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
    // it is still listed for both parties, as ended
    const listed = await get(escrowList, { token: deal.payee.accessToken, query: { status: 'ended' } });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([deal.escrowId]);
  });

  it('a refunded escrow ends the same way; a cancelled one never does', async () => {
    const refunded = await fundedDeal({ category: 'hiring' });
    expectStatus(await escrowOp('escrow-refund', refunded.payee, refunded.escrowId), 200);
    const refundedAt = pastInstant(40);
    await setClosedAt(refunded.escrowId, refundedAt);

    const draft = await newDeal();
    expectStatus(await escrowOp('escrow-cancel', draft.initiator, draft.escrowId), 200);
    await testDb()`update public.escrows set cancelled_at = ${refundedAt.toISOString()}::timestamptz where id = ${draft.escrowId}`;

    await job(new Date(refundedAt.getTime() + 13 * DAY));
    expect(await escrowStatus(refunded)).toBe('refunded');
    await job(new Date(refundedAt.getTime() + 14 * DAY + 1000));
    expect(await escrowStatus(refunded)).toBe('ended');
    expect(await escrowStatus(draft)).toBe('cancelled');
    expect(await walletKobo(refunded.payer.id)).toBe(kobo(refunded.feeBreakdown.total_charge));
  });
});

// ---- payout to the payee's bank ------------------------------------------------------------------

describe('release with a default payout account: the payout transfer', () => {
  async function releasedWithPayout(): Promise<
    { deal: Deal; tx: { id: string; amount: string; status: string; user_id: string }; account: string }
  > {
    const deal = await fundedDeal({ category: 'p2p_crypto', amount: 20_000 });
    const account = await addPayout(deal.payee);
    const res = await escrowOp('escrow-release', deal.payer, deal.escrowId);
    expectStatus(res, 200);
    expect(res.body.data.status).toBe('released');
    const txs = await payoutTxs(deal.escrowId);
    expect(txs).toHaveLength(1);
    return { deal, tx: txs[0]!, account };
  }

  it('creates a pending escrow_payout and sends /transfer with the transaction id as reference', async () => {
    const { deal, tx, account } = await releasedWithPayout();
    const payout = kobo(deal.feeBreakdown.seller_payout);
    expect(tx).toMatchObject({ user_id: deal.payee.id, status: 'pending' });
    expect(Number(tx.amount)).toBe(payout);
    // credited, then on its way to the bank: the wallet is empty, the hold too
    expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });
    const transfers = (await paystack.requests('/transfer')).filter((r) => r.body?.reference === tx.id);
    expect(transfers).toHaveLength(1);
    expect(Number(transfers[0]?.body.amount)).toBe(payout);
    // to a recipient for the payee's default account
    const recipients = (await paystack.requests('/transferrecipient')).filter((r) =>
      r.body?.account_number === account
    );
    expect(recipients.length).toBeGreaterThanOrEqual(1);
    expect(transfers[0]?.body.recipient).toMatch(/^RCP_/);
    const payeeNote = (await notes(deal.payee, deal.escrowId)).find((n) => n.event_type === 'released');
    expect(payeeNote?.content).toMatch(/bank/);
  });

  it("transfer.success marks the payout succeeded and tells the payee 'payout_succeeded' once", async () => {
    const { deal, tx } = await releasedWithPayout();
    const d = await paystack.transferOutcome(tx.id, 'transfer.success', { times: 2 });
    expect(d.responses.map((r) => r.status)).toEqual([200, 200]);
    const [after] = await payoutTxs(deal.escrowId);
    expect(after?.status).toBe('succeeded');
    expect(after?.provider_transfer_id).toMatch(/^TRF_/);
    const ok = (await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'payout_succeeded');
    expect(ok).toHaveLength(1);
    expect(ok[0]).toMatchObject({ entity_type: 'transaction', entity_id: tx.id });
    expect(await escrowStatus(deal)).toBe('released');
    expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });
  });

  it("transfer.failed puts the money back in the payee's wallet exactly once", async () => {
    const { deal, tx } = await releasedWithPayout();
    const payout = kobo(deal.feeBreakdown.seller_payout);
    const d = await paystack.transferOutcome(tx.id, 'transfer.failed');
    expect(d.responses[0]?.status).toBe(200);
    expect(await balances(deal)).toEqual({ payer: 0, payee: payout, hold: 0 });
    expect((await payoutTxs(deal.escrowId))[0]?.status).toBe('failed');
    expect((await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'payout_failed')).toHaveLength(1);
    // redelivered, concurrent duplicates, and a reversal on top: still once
    await paystack.transferOutcome(tx.id, 'transfer.failed', { times: 3, concurrent: true });
    await paystack.transferOutcome(tx.id, 'transfer.reversed');
    expect(await balances(deal)).toEqual({ payer: 0, payee: payout, hold: 0 });
    expect((await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'payout_failed')).toHaveLength(1);
    expect(await escrowStatus(deal)).toBe('released');
  });

  it('the automatic release at the end of inspection starts the payout too', async () => {
    const deal = await fundedDeal({ category: 'goods_products', amount: 5_000 });
    await addPayout(deal.payee);
    expectStatus(await escrowOp('escrow-deliver', deal.payee, deal.escrowId), 200);
    const deliveredAt = pastInstant(5);
    await setDelivery(deal.escrowId, deliveredAt);
    const ran = await job(new Date(deliveredAt.getTime() + DAY));
    expect(ran.released).toBeGreaterThanOrEqual(1);
    expect(ran.payouts_started).toBeGreaterThanOrEqual(1);
    expect(await escrowStatus(deal)).toBe('released');
    const txs = await payoutTxs(deal.escrowId);
    expect(txs.map((t) => [t.status, Number(t.amount)])).toEqual([['pending', kobo(deal.feeBreakdown.seller_payout)]]);
    expect((await paystack.requests('/transfer')).filter((r) => r.body?.reference === txs[0]?.id)).toHaveLength(1);
    await paystack.transferOutcome(txs[0]!.id, 'transfer.success');
    expect((await payoutTxs(deal.escrowId))[0]?.status).toBe('succeeded');
  });

  it('without a payout account the money stays in the wallet and no transfer is sent', async () => {
    const deal = await fundedDeal({ category: 'p2p_crypto' });
    expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 200);
    expect(await payoutTxs(deal.escrowId)).toEqual([]);
    expect(await walletKobo(deal.payee.id)).toBe(kobo(deal.feeBreakdown.seller_payout));
    const payeeNote = (await notes(deal.payee, deal.escrowId)).find((n) => n.event_type === 'released');
    expect(payeeNote?.content).toMatch(/wallet/);
  });
});
