// KYC tier limits (docs/kyc.md#tiers-and-their-limits) through the real server: single, daily (Africa/Lagos) and balance
// limits on wallet-topup, escrow-fund and wallet-withdraw, refused with 403 naming the money field
// and the tier that would allow it; concurrent requests never pass a daily limit together; money
// that arrives is never refused, and above the balance limit the user is told to verify.
// Tier 0 moves no money at all (the identity floor: tests/integration/kyc-floor.test.ts), so the
// stories here run at tier 1, the first tier that moves money: NGN 50,000 at once, NGN 300,000 a
// day and NGN 300,000 in the wallet (with pending top-ups); a refusal there names tier 2.
import { describe, expect, it } from 'vitest';
import { nairaEn } from '../../shared/core/money.ts';
import { KYC_TIERS } from '../support/seeds.ts';
import { type ApiResult, expectOk, get, post } from '../support/api.ts';
import { expectLedgerInvariants, lastSms, smsMatching, testDb } from '../support/db.ts';
import { propose, raise, respond } from '../support/disputes.ts';
import { type Deal, escrowOp, fundWallet, milestoneOp, newDeal } from '../support/escrows.ts';
import { walletKobo } from '../support/ledger.ts';
import { raiseTier } from '../support/kyc.ts';
import { paystack } from '../support/paystack.ts';
import { addPayout } from '../support/payouts.ts';
import { signUp, type TestUser } from '../support/users.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import kycStatus from '../../supabase/functions/kyc-status/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

const topup = (u: TestUser, amount: number) => post(walletTopup, { amount }, { token: u.accessToken });

/** A 403 over a limit: the detail names `field`, and the message the tier that allows it. */
function expectOverLimit(r: ApiResult, field: string, allowedTier: number | null) {
  expect(r.status, JSON.stringify(r.body)).toBe(403);
  expect(r.body).toMatchObject({ code: 'kyc_limit_exceeded' });
  expect(r.body.details).toHaveLength(1);
  expect(r.body.details[0].field).toBe(field);
  if (allowedTier === null) expect(r.body.error).toContain('no tier allows it');
  else expect(r.body.error).toContain(`tier ${allowedTier} allows it`);
  return r.body.error as string;
}

/** Moves a user's transactions of today to yesterday (Lagos), as if a day had passed for them. */
async function aDayLater(userId: string) {
  await testDb()`update public.transactions set created_at = created_at - interval '1 day' where user_id = ${userId}`;
}

/** Tops a tier-1 user's wallet up with `naira` today, in top-ups of at most the single limit. */
async function creditToday(u: TestUser, naira: number): Promise<void> {
  for (let left = naira; left > 0;) {
    const part = Math.min(TIER_1.single, left);
    await fundWallet(u, part);
    left -= part;
  }
}

/** Tier 1's limits in naira, as seeded (tests/support/seeds.ts). */
const TIER_1 = {
  single: KYC_TIERS[1]!.single / 100,
  daily: KYC_TIERS[1]!.daily / 100,
  balance: KYC_TIERS[1]!.balance! / 100,
};

/**
 * Credits a tier-1 user's wallet with `naira` in top-ups of at most NGN 50,000 (the single limit),
 * then moves them to yesterday so today's daily limit is left unused. At tier 1 the balance limit
 * (NGN 300,000) equals the daily one, so whatever the wallet may hold fits one day.
 */
async function creditYesterday(u: TestUser, naira: number): Promise<void> {
  expect(naira).toBeLessThanOrEqual(Math.min(TIER_1.daily, TIER_1.balance));
  for (let left = naira; left > 0;) {
    const part = Math.min(TIER_1.single, left);
    await fundWallet(u, part);
    left -= part;
  }
  await aDayLater(u.id);
}

describe('the tiers table', () => {
  it('holds the tier defaults of docs/kyc.md, exactly as tests/support/seeds.ts has them', async () => {
    const rows = await testDb()<
      { tier: number; single_limit: string; daily_limit: string; balance_limit: string | null; checks: string[] }[]
    >`select tier, single_limit::text, daily_limit::text, balance_limit::text, checks from private.kyc_tiers order by tier`;
    expect(rows.map((r) => ({
      tier: r.tier,
      checks: r.checks,
      single: Number(r.single_limit),
      daily: Number(r.daily_limit),
      balance: r.balance_limit === null ? null : Number(r.balance_limit),
    }))).toEqual(KYC_TIERS.map((t) => ({ ...t, checks: [...t.checks] })));
  });

  describe('kyc-status', () => {
    // a new user's (tier 0, limits of 0, tier 1 next) is shown in kyc-floor.test.ts
    it('kyc-status shows a user at tier 1 with its limits, nothing used, its check and what tier 2 needs', async () => {
      const u = await signUp({ tier: 1 });
      const s = expectOk(await get(kycStatus, { token: u.accessToken }));
      expect(s).toEqual({
        tier: 1,
        limits: { single: 50_000, daily: 300_000, balance: 300_000 },
        used_today: 0,
        checks: [{ type: 'kyc_basic', status: 'passed', updated_at: expect.any(String) }],
        next_tier: { tier: 2, needs: ['kyc_address'] },
      });
      expect(s.limits).toEqual(TIER_1);
      expect((await get(kycStatus)).status).toBe(401);
    });
  });
});

describe('single limit', () => {
  it('wallet-topup: NGN 50,000 is allowed at tier 1, a kobo more is 403 on amount naming tier 2', async () => {
    const u = await signUp({ tier: 1 });
    expectOk(await topup(u, 50_000));
    const msg = expectOverLimit(await topup(u, 50_000.01), 'amount', 2);
    expect(msg).toContain('over the tier 1 limit of NGN 50,000.00');
    // nothing was created for the refused request
    const [n] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from public.transactions where user_id = ${u.id}`;
    expect(n?.n).toBe(1);
  });

  it('names the lowest tier that allows it, or none above the highest', async () => {
    const u = await signUp({ tier: 3 });
    expectOk(await topup(u, 5_000_000));
    expectOverLimit(await topup(u, 5_000_000.01), 'amount', 4);
    const t4 = await signUp({ tier: 4 });
    expectOverLimit(await topup(t4, 50_000_000.01), 'amount', null);
  });

  it('wallet-withdraw: over the single limit is 403 on amount, and the wallet is untouched', async () => {
    const u = await signUp({ tier: 1 });
    await creditYesterday(u, 60_000);
    await addPayout(u);
    const before = await walletKobo(u.id);
    expect(before).toBe(60_000_00);
    expectOverLimit(await post(walletWithdraw, { amount: 50_000.01 }, { token: u.accessToken }), 'amount', 2);
    expect(await walletKobo(u.id)).toBe(before);
  });

  it('escrow-fund: the total charge is what counts, by card, by bank transfer and from the wallet (403 on escrow_id)', async () => {
    // NGN 49,700 plus fee and VAT is over tier 1's NGN 50,000
    const deal = await newDeal({ amount: 49_700, payerTier: 1 });
    expect(deal.feeBreakdown.total_charge).toBeGreaterThan(50_000);
    for (const method of ['card', 'bank_transfer', 'wallet']) {
      const r = await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method });
      const msg = expectOverLimit(r, 'escrow_id', 2);
      expect(msg).toContain("escrow's total charge");
    }
    // a smaller escrow passes at tier 1
    const small = await newDeal({ amount: 10_000, payerTier: 1 });
    expectOk(await escrowOp('escrow-fund', small.payer, small.escrowId, { method: 'card' }));
  });

  it('a wrong party or state is still 403 / 409 of its own, not a limit', async () => {
    // an escrow over the payer's limit, asked for by the payee
    const deal = await newDeal({ amount: 49_700, payerTier: 1 });
    const r = await escrowOp('escrow-fund', deal.counterparty, deal.escrowId, { method: 'card' });
    expect(r.status).toBe(403);
    expect(r.body.details).toBeUndefined();
  });
});

describe('daily limit (since 00:00 Africa/Lagos)', () => {
  it('counts pending top-ups: six of NGN 50,000 fit tier 1, then NGN 100.01 more is 403 naming the total', async () => {
    const u = await signUp({ tier: 1 });
    for (let i = 0; i < 6; i++) expectOk(await topup(u, 50_000)); // NGN 300,000 pending: the day is used up
    // the smallest top-up (NGN 100) and a kobo; the daily limit is checked before the balance
    const msg = expectOverLimit(await topup(u, 0.01 + 100), 'amount', 2);
    expect(msg).toContain('from NGN 300,000.00 to NGN 300,100.01, over the tier 1 daily limit of NGN 300,000.00');
    const s = expectOk(await get(kycStatus, { token: u.accessToken }));
    expect(s.used_today).toBe(300_000);
  });

  it("yesterday's movements do not count; a failed top-up does not either", async () => {
    const u = await signUp({ tier: 1 });
    await addPayout(u);
    // yesterday: NGN 150,000 in and the same out, a full day's NGN 300,000, and an empty wallet
    // (the balance limit counts pending top-ups whatever their day, so what came in left again)
    for (let i = 0; i < 3; i++) await fundWallet(u, 50_000);
    for (let i = 0; i < 3; i++) expectOk(await post(walletWithdraw, { amount: 50_000 }, { token: u.accessToken }));
    expect(await walletKobo(u.id)).toBe(0);
    await aDayLater(u.id);
    // today: a failed NGN 50,000, then six of NGN 50,000 (the whole day's limit, and the balance's)
    const failed = expectOk(await topup(u, 50_000));
    await testDb()`select private.topup_fail(${failed.transaction_id}, 'declined')`;
    for (let i = 0; i < 6; i++) expectOk(await topup(u, 50_000));
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).used_today).toBe(300_000);
  });

  it('counts the day in Lagos: 23:30 UTC is already the next day there', async () => {
    const u = await signUp({ tier: 1 });
    // 23:30 UTC yesterday is 00:30 today in Lagos (UTC+1): it counts today
    const [row] = await testDb()<{ start: Date }[]>`select private.lagos_day_start(now()) as start`;
    const start = row?.start as Date;
    expect(start.getUTCHours()).toBe(23);
    expectOk(await topup(u, 20_000));
    await testDb()`update public.transactions set created_at = ${new Date(
      start.getTime() + 30 * 60_000,
    )} where user_id = ${u.id}`;
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).used_today).toBe(20_000);
    await testDb()`update public.transactions set created_at = ${new Date(
      start.getTime() - 30 * 60_000,
    )} where user_id = ${u.id}`;
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).used_today).toBe(0);
  });

  it('a wallet funding is checked against the single limit only: the money was counted when it came in', async () => {
    const deal = await newDeal({ amount: 10_000, payerTier: 1 });
    for (let i = 0; i < 6; i++) await fundWallet(deal.payer, 50_000); // 300,000 moved in today: the daily limit is used up
    expect(expectOverLimit(await topup(deal.payer, 100), 'amount', 2)).toContain('daily limit');
    expectOk(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
  });

  it('20 top-ups in parallel cannot together pass the daily limit: exactly 10 of NGN 30,000 pass', async () => {
    const u = await signUp({ tier: 1 });
    const results = await Promise.all(Array.from({ length: 20 }, () => topup(u, 30_000)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 403);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(10);
    for (const r of refused) {
      expect(r.body.details[0]!.field).toBe('amount');
      expect(r.body.error).toContain('daily limit of NGN 300,000.00');
    }
    const [sum] = await testDb()<{ total: string }[]>`
      select coalesce(sum(amount), 0)::text as total from public.transactions where user_id = ${u.id} and status = 'pending'`;
    expect(Number(sum?.total)).toBe(300_000_00);
  });

  it('20 withdrawals in parallel cannot pass it either, and the ledger stays whole', async () => {
    const u = await signUp({ tier: 1 }); // NGN 50,000 single, 300,000 a day
    await fundWallet(u, 50_000);
    await fundWallet(u, 50_000);
    await fundWallet(u, 50_000);
    await fundWallet(u, 50_000);
    await fundWallet(u, 50_000); // 250,000 moved in: 50,000 of the day is left
    await addPayout(u);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => post(walletWithdraw, { amount: 10_000 }, { token: u.accessToken })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 403)).toHaveLength(15);
    expect(await walletKobo(u.id)).toBe(200_000_00);
    await expectLedgerInvariants();
  });
});

describe('balance limit', () => {
  it('a top-up that would take the wallet (with pending top-ups) over the tier balance is 403 on amount', async () => {
    const u = await signUp({ tier: 1 });
    await creditYesterday(u, 280_000); // 280,000 held, none of it today
    expectOk(await topup(u, 15_000)); // pending: 295,000 with the wallet
    const msg = expectOverLimit(await topup(u, 5_000.01), 'amount', 2);
    expect(msg).toContain('from NGN 295,000.00 to NGN 300,000.01, over the tier 1 balance limit of NGN 300,000.00');
    expectOk(await topup(u, 5_000));
  });
});

describe('money that arrives is never refused', () => {
  it('a bank transfer above the balance limit is credited; the user is told to verify, once a day', async () => {
    const u = await signUp({ tier: 1 });
    expectOk(await post(virtualAccountCreate, {}, { token: u.accessToken }));
    await paystack.assignOutcome(`${u.id}@customers.escrow.ng`, true);
    const va = expectOk(await get(virtualAccountGet, { token: u.accessToken }));
    // above the tier 1 balance (and daily) limit of NGN 300,000, in one transfer and then another
    const first = await paystack.dvaDeposit(va.account_number!, 350_000_00);
    expect(first.responses[0]?.status).toBe(200);
    await paystack.dvaDeposit(va.account_number!, 1_000_00);
    expect(await walletKobo(u.id)).toBe(351_000_00);
    const notes = expectOk(await get(notificationList, { token: u.accessToken }));
    const needed = notes.filter((n: { event_type: string }) => n.event_type === 'verification_needed');
    expect(needed).toHaveLength(1);
    expect(needed[0]).toMatchObject({
      escrow_id: null,
      conversation_id: null,
      entity_type: 'account',
      entity_id: u.id,
      action_label: 'Verify identity',
    });
    // the wallet as the first transfer left it, and the tier 1 balance limit it is above
    expect(needed[0]!.content).toContain('NGN 350,000.00, above the NGN 300,000.00 tier 1 allows');
    expect(await lastSms(u.phone)).toContain('Verify your identity');
    expect(await smsMatching(u.phone, '%above the NGN 300,000.00%')).toBe(1);
    // both transfers count toward today's total, though it passes the daily limit: neither was refused
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).used_today).toBe(351_000);
  });

  it('releases into a wallet above the balance limit are credited; the payee is told to verify, once a day', async () => {
    const deal = await newDeal({ amount: 10_000, payerTier: 1 });
    const payee = deal.payee;
    // the payee at tier 1 (at tier 0 the release is held by the identity floor instead) and its
    // NGN 300,000 balance, full; with no payout account saved the release stays in the wallet
    expect(await raiseTier(payee.id, 1)).toBe(1);
    await creditYesterday(payee, 300_000);
    await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
    expectOk(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId));
    expectOk(await escrowOp('escrow-deliver', payee, deal.escrowId));
    expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    const balance = 300_000_00 + Math.round(deal.feeBreakdown.seller_payout * 100);
    expect(await walletKobo(payee.id)).toBe(balance);
    const notes = expectOk(await get(notificationList, { token: payee.accessToken }));
    const needed = notes.filter((n: { event_type: string }) => n.event_type === 'verification_needed');
    expect(needed).toHaveLength(1);
    expect(needed[0]!.content).toBe(
      `Your wallet holds ${nairaEn(balance)}, above the NGN 300,000.00 tier 1 allows. ` +
        'The money is yours; verify your identity to raise the limit.',
    );
    expect(await lastSms(payee.phone)).toContain('above the NGN 300,000.00 your verification level allows');
    await expectLedgerInvariants();
  });

  it('raising the tier lifts the limit at once', async () => {
    const u = await signUp({ tier: 1 });
    expectOverLimit(await topup(u, 60_000), 'amount', 2);
    expect(await raiseTier(u.id, 2)).toBe(2);
    expectOk(await topup(u, 60_000));
  });
});

// ---- payouts to the bank count against the payee's limits -------------------------------------

/** The payee's escrow payouts to the bank (pending or paid), oldest first, in kobo. */
async function payoutsOf(userId: string): Promise<number[]> {
  const rows = await testDb()<{ amount: string }[]>`
    select amount::text from public.transactions
     where user_id = ${userId} and type = 'escrow_payout' and status in ('pending', 'succeeded')
     order by created_at, id`;
  return rows.map((r) => Number(r.amount));
}

/**
 * A funded escrow of `amount` from `payer` (who pays from the wallet) to `payee`, accepted and
 * delivered: what a release, a milestone or a settlement then pays the payee.
 */
async function dealTo(
  payer: TestUser,
  payee: TestUser,
  amount: number,
  category: 'goods_products' | 'hiring' = 'goods_products',
): Promise<Deal> {
  const created = expectOk(
    await post(escrowCreate, {
      category,
      payer_role: 'initiator',
      title: 'Phone case',
      counterparty_phone: payee.phone,
      amount,
    }, { token: payer.accessToken }),
    201,
  );
  await fundWallet(payer, created.fee_breakdown.total_charge);
  expectOk(await escrowOp('escrow-fund', payer, created.escrow_id, { method: 'wallet' }));
  expectOk(await escrowOp('escrow-accept', payee, created.escrow_id));
  return {
    initiator: payer,
    counterparty: payee,
    payer,
    payee,
    escrowId: created.escrow_id,
    conversationId: created.conversation_id,
    inviteToken: created.invite_token,
    feeBreakdown: created.fee_breakdown,
  };
}

/** A release of `amount` from payer to payee; answers what the payee was credited, in kobo. */
async function releaseTo(payer: TestUser, payee: TestUser, amount: number): Promise<number> {
  const deal = await dealTo(payer, payee, amount);
  expectOk(await escrowOp('escrow-deliver', payee, deal.escrowId));
  expectOk(await escrowOp('escrow-release', payer, deal.escrowId));
  return Math.round(deal.feeBreakdown.seller_payout * 100);
}

/** A tier-1 payee with a default payout account, and a tier-3 payer who can fund NGN 1,000,000. */
async function payeeAndPayer() {
  const [payee, payer] = await Promise.all([signUp({ tier: 1 }), signUp({ tier: 3 })]);
  await addPayout(payee);
  return { payee, payer };
}

describe("payouts to the bank count against the payee's limits", () => {
  it('releases pay out within the daily and single limits; the ones over stay in the wallet, the payee told once', async () => {
    const { payee, payer } = await payeeAndPayer();
    // six releases of NGN 49,000 pay out NGN 48,632.50 each: NGN 291,795 of the day's NGN 300,000
    const paid: number[] = [];
    for (let i = 0; i < 6; i++) paid.push(await releaseTo(payer, payee, 49_000));
    expect(await payoutsOf(payee.id)).toEqual(paid);
    const used = paid.reduce((a, b) => a + b, 0);
    expect(used).toBeLessThanOrEqual(TIER_1.daily * 100);
    expect(expectOk(await get(kycStatus, { token: payee.accessToken })).used_today).toBe(used / 100);
    expect(await walletKobo(payee.id)).toBe(0);
    // the seventh would pass the daily limit: credited to the wallet, no payout, the payee told
    const seventh = await releaseTo(payer, payee, 49_000);
    expect(await payoutsOf(payee.id)).toEqual(paid);
    expect(await walletKobo(payee.id)).toBe(seventh);
    const notes = expectOk(await get(notificationList, { token: payee.accessToken }));
    const released = notes.filter((n: { event_type: string }) => n.event_type === 'released');
    expect(released[0]!.content).toContain('in your wallet');
    const needed = notes.filter((n: { event_type: string }) => n.event_type === 'verification_needed');
    expect(needed).toHaveLength(1);
    expect(needed[0]).toMatchObject({ entity_type: 'account', entity_id: payee.id, action_label: 'Verify identity' });
    expect(needed[0]!.content).toBe(
      `${nairaEn(seventh)} paid to you is in your wallet and was not sent to your bank: it would pass your ` +
        'daily limit of NGN 300,000.00. Withdraw it within your limits, or verify to tier 2 to raise them.',
    );
    expect(await lastSms(payee.phone)).toContain('not sent to your bank');
    // a release of NGN 1,000,000 (the probe's) is over the single limit: held too, told no twice a day
    const big = await releaseTo(payer, payee, 1_000_000);
    expect(await payoutsOf(payee.id)).toEqual(paid);
    expect(await walletKobo(payee.id)).toBe(seventh + big);
    expect(await smsMatching(payee.phone, '%not sent to your bank%')).toBe(1);
    // the payouts counted toward the day: the payee's own withdrawal meets what is left of it
    expectOverLimit(await post(walletWithdraw, { amount: 10_000 }, { token: payee.accessToken }), 'amount', 2);
    // a day later the payee withdraws the held money within the limits
    await aDayLater(payee.id);
    expect(expectOk(await get(kycStatus, { token: payee.accessToken })).used_today).toBe(0);
    expectOk(await post(walletWithdraw, { amount: TIER_1.single }, { token: payee.accessToken }));
    expectOverLimit(
      await post(walletWithdraw, { amount: TIER_1.single + 0.01 }, { token: payee.accessToken }),
      'amount',
      2,
    );
    await expectLedgerInvariants();
  });

  it('a single release above the single limit stays in the wallet, and a tier that allows it pays out', async () => {
    const { payee, payer } = await payeeAndPayer();
    const big = await releaseTo(payer, payee, 1_000_000);
    expect(big).toBeGreaterThan(TIER_1.single * 100);
    expect(await payoutsOf(payee.id)).toEqual([]);
    expect(await walletKobo(payee.id)).toBe(big);
    expect(expectOk(await get(kycStatus, { token: payee.accessToken })).used_today).toBe(0);
    const needed = expectOk(await get(notificationList, { token: payee.accessToken }))
      .filter((n: { event_type: string }) => n.event_type === 'verification_needed');
    expect(needed).toHaveLength(1);
    expect(needed[0]!.content).toContain('limit of NGN 50,000.00 a withdrawal');
    expect(needed[0]!.content).toContain('verify to tier 3');
    expect(await lastSms(payee.phone)).toContain('verify to tier 3');
    // at tier 3 the next release of that size goes to the bank
    expect(await raiseTier(payee.id, 3)).toBe(3);
    const next = await releaseTo(payer, payee, 1_000_000);
    expect(await payoutsOf(payee.id)).toEqual([next]);
    await expectLedgerInvariants();
  });

  it('a milestone release that would pass the daily limit stays in the wallet', async () => {
    const { payee, payer } = await payeeAndPayer();
    const deal = await dealTo(payer, payee, 98_000, 'hiring');
    await creditToday(payee, 250_000); // NGN 250,000 of the day's NGN 300,000 moved in by the payee
    const release = async () => {
      const m = expectOk(
        await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'Part', amount: 49_000 }, {
          token: payee.accessToken,
        }),
        201,
      );
      expectOk(await milestoneOp('milestone-approve', payer, m.id));
      expectOk(await milestoneOp('milestone-complete', payee, m.id));
      const before = await walletKobo(payee.id);
      expectOk(await milestoneOp('milestone-release', payer, m.id));
      return (await walletKobo(payee.id)) - before;
    };
    // the first fits what is left of the day (paid out: the wallet is unchanged), the second would not
    expect(await release()).toBe(0);
    const [first] = await payoutsOf(payee.id);
    expect(250_000_00 + first!).toBeLessThanOrEqual(TIER_1.daily * 100);
    const held = await release();
    expect(held).toBeGreaterThan(0);
    expect(250_000_00 + first! + held).toBeGreaterThan(TIER_1.daily * 100);
    expect(await payoutsOf(payee.id)).toEqual([first]);
    expect(await smsMatching(payee.phone, '%not sent to your bank: it would pass your daily limit%')).toBe(1);
    expect(expectOk(await get(kycStatus, { token: payee.accessToken })).used_today).toBe(250_000 + first! / 100);
    await expectLedgerInvariants();
  });

  it("a dispute settled in the payee's favour that would pass the daily limit stays in the wallet", async () => {
    const { payee, payer } = await payeeAndPayer();
    const deal = await dealTo(payer, payee, 49_000);
    await creditToday(payee, 260_000);
    const before = await walletKobo(payee.id);
    expectOk(await raise(deal, 'payee'), 201);
    const p = expectOk(await propose(deal, 'payee', { outcome: 'release' }), 201).proposals[0]!;
    expectOk(await respond(deal, 'payer', p.id, true));
    const settled = (await walletKobo(payee.id)) - before;
    expect(settled).toBe(Math.round(deal.feeBreakdown.seller_payout * 100));
    expect(await payoutsOf(payee.id)).toEqual([]);
    expect(await smsMatching(payee.phone, '%not sent to your bank%')).toBe(1);
    expect(expectOk(await get(kycStatus, { token: payee.accessToken })).used_today).toBe(260_000);
    await expectLedgerInvariants();
  });

  it('releases and withdrawals at the same moment never pass the daily limit together', async () => {
    const { payee, payer } = await payeeAndPayer();
    await creditYesterday(payee, 200_000); // money to withdraw, none of it counted today
    const deals = await Promise.all(Array.from({ length: 8 }, () => dealTo(payer, payee, 49_000)));
    for (const d of deals) expectOk(await escrowOp('escrow-deliver', payee, d.escrowId));
    const results = await Promise.all([
      ...deals.map((d) => escrowOp('escrow-release', payer, d.escrowId)),
      ...Array.from({ length: 6 }, () => post(walletWithdraw, { amount: 40_000 }, { token: payee.accessToken })),
    ]);
    // every release succeeds (money that arrives is never refused); withdrawals past the day are 403
    for (const r of results.slice(0, deals.length)) expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const r of results.slice(deals.length)) expect([200, 403], JSON.stringify(r.body)).toContain(r.status);
    const [row] = await testDb()<{ used: string }[]>`select private.kyc_used_today(${payee.id}, now())::text as used`;
    expect(Number(row!.used)).toBeLessThanOrEqual(TIER_1.daily * 100);
    // the day was used up: no payout or withdrawal of NGN 48,632.50 or more would still fit
    expect(Number(row!.used)).toBeGreaterThan(TIER_1.daily * 100 - 48_632_50);
    await expectLedgerInvariants();
  });
});
