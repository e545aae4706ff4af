// KYC tier limits (docs/kyc.md#tiers-and-their-limits) through the real server: single, daily (Africa/Lagos) and balance
// limits on wallet-topup, escrow-fund and wallet-withdraw, refused with 403 naming the money field
// and the tier that would allow it; concurrent requests never pass a daily limit together; money
// that arrives is never refused, and above the balance limit the user is told to verify.
import { describe, expect, it } from 'vitest';
import { KYC_TIERS } from '../support/seeds.ts';
import { type ApiResult, expectOk, get, post } from '../support/api.ts';
import { expectLedgerInvariants, lastSms, testDb } from '../support/db.ts';
import { escrowOp, fundWallet, newDeal } from '../support/escrows.ts';
import { walletKobo } from '../support/ledger.ts';
import { raiseTier } from '../support/kyc.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import kycStatus from '../../supabase/functions/kyc-status/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

const topup = (u: TestUser, amount: number) => post(walletTopup, { amount }, { token: u.accessToken });

/** A 403 over a limit: the detail names `field`, and the message the tier that allows it. */
function expectOverLimit(r: ApiResult, field: string, allowedTier: number | null) {
  expect(r.status, JSON.stringify(r.body)).toBe(403);
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

/**
 * Credits a tier-0 user's wallet with `naira` in top-ups of at most NGN 20,000, two a day (the
 * single and daily limits), moving each day's top-ups to the day before so today is left unused.
 */
async function creditOverDays(u: TestUser, naira: number): Promise<void> {
  for (let left = naira, n = 0; left > 0; n++) {
    const part = Math.min(20_000, left);
    await fundWallet(u, part);
    left -= part;
    if (n % 2 === 1 || left === 0) await aDayLater(u.id);
  }
}

/** Saves a payout account the fake bank knows (wallet-withdraw pays the default one). */
async function addPayout(u: TestUser): Promise<void> {
  const accountNumber = String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999)).slice(0, 10);
  await paystack.registerAccount('058', accountNumber, 'ADA OBI');
  const r = await post(payoutAdd, {
    bank_code: '058',
    bank_name: 'Guaranty Trust Bank',
    account_number: accountNumber,
    account_name: 'Ada Obi',
  }, { token: u.accessToken });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
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
    it('kyc-status shows a new user at tier 0 with its limits, nothing used and what tier 1 needs', async () => {
      const u = await signUp();
      const s = expectOk(await get(kycStatus, { token: u.accessToken }));
      expect(s).toEqual({
        tier: 0,
        limits: { single: 20_000, daily: 50_000, balance: 100_000 },
        used_today: 0,
        checks: [],
        next_tier: { tier: 1, needs: ['kyc_basic'] },
      });
      expect((await get(kycStatus)).status).toBe(401);
    });
  });
});

describe('single limit', () => {
  it('wallet-topup: NGN 20,000 is allowed at tier 0, a kobo more is 403 on amount naming tier 1', async () => {
    const u = await signUp();
    expectOk(await topup(u, 20_000));
    const msg = expectOverLimit(await topup(u, 20_000.01), 'amount', 1);
    expect(msg).toContain('NGN 20,000.00');
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
    const u = await signUp();
    await creditOverDays(u, 60_000);
    await addPayout(u);
    const before = await walletKobo(u.id);
    expectOverLimit(await post(walletWithdraw, { amount: 20_000.01 }, { token: u.accessToken }), 'amount', 1);
    expect(await walletKobo(u.id)).toBe(before);
  });

  it('escrow-fund: the total charge is what counts, by card, by bank transfer and from the wallet (403 on escrow_id)', async () => {
    // NGN 19,900 plus fee and VAT is over NGN 20,000
    const deal = await newDeal({ amount: 19_900 });
    expect(deal.feeBreakdown.total_charge).toBeGreaterThan(20_000);
    for (const method of ['card', 'bank_transfer', 'wallet']) {
      const r = await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method });
      const msg = expectOverLimit(r, 'escrow_id', 1);
      expect(msg).toContain("escrow's total charge");
    }
    // a smaller escrow passes at tier 0
    const small = await newDeal({ amount: 10_000 });
    expectOk(await escrowOp('escrow-fund', small.payer, small.escrowId, { method: 'card' }));
  });

  it('a wrong party or state is still 403 / 409 of its own, not a limit', async () => {
    const deal = await newDeal({ amount: 19_900 });
    const r = await escrowOp('escrow-fund', deal.counterparty, deal.escrowId, { method: 'card' });
    expect(r.status).toBe(403);
    expect(r.body.details).toBeUndefined();
  });
});

describe('daily limit (since 00:00 Africa/Lagos)', () => {
  it('counts pending top-ups: 20k + 20k + 10k fit tier 0, then a kobo more is 403 naming the total', async () => {
    const u = await signUp();
    expectOk(await topup(u, 20_000));
    expectOk(await topup(u, 20_000));
    expectOk(await topup(u, 10_000));
    const msg = expectOverLimit(await topup(u, 0.01 + 100), 'amount', 1);
    expect(msg).toContain('daily limit of NGN 50,000.00');
    const s = expectOk(await get(kycStatus, { token: u.accessToken }));
    expect(s.used_today).toBe(50_000);
  });

  it("yesterday's movements do not count; a failed top-up does not either", async () => {
    const u = await signUp();
    expectOk(await topup(u, 20_000));
    expectOk(await topup(u, 20_000));
    await aDayLater(u.id);
    const third = expectOk(await topup(u, 20_000));
    await testDb()`select private.topup_fail(${third.transaction_id}, 'declined')`;
    expectOk(await topup(u, 20_000));
    expectOk(await topup(u, 20_000));
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).used_today).toBe(40_000);
  });

  it('counts the day in Lagos: 23:30 UTC is already the next day there', async () => {
    const u = await signUp();
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
    const deal = await newDeal({ amount: 10_000 });
    await fundWallet(deal.payer, 20_000);
    await fundWallet(deal.payer, 20_000);
    await fundWallet(deal.payer, 10_000); // 50,000 moved in today: the daily limit is used up
    expectOverLimit(await topup(deal.payer, 100), 'amount', 1);
    expectOk(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
  });

  it('20 top-ups in parallel cannot together pass the daily limit: exactly 10 of NGN 5,000 pass', async () => {
    const u = await signUp();
    const results = await Promise.all(Array.from({ length: 20 }, () => topup(u, 5_000)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 403);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.body.details[0]!.field).toBe('amount');
    const [sum] = await testDb()<{ total: string }[]>`
      select coalesce(sum(amount), 0)::text as total from public.transactions where user_id = ${u.id} and status = 'pending'`;
    expect(Number(sum?.total)).toBe(50_000_00);
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
    const u = await signUp();
    await creditOverDays(u, 80_000); // 80,000 held, none of it today
    expectOk(await topup(u, 15_000)); // pending: 95,000 with the wallet
    const msg = expectOverLimit(await topup(u, 5_000.01), 'amount', 1);
    expect(msg).toContain('balance limit of NGN 100,000.00');
    expectOk(await topup(u, 5_000));
  });
});

describe('money that arrives is never refused', () => {
  it('a bank transfer above the balance limit is credited; the user is told to verify, once a day', async () => {
    const u = await signUp();
    expectOk(await post(virtualAccountCreate, {}, { token: u.accessToken }));
    await paystack.assignOutcome(`${u.id}@customers.escrow.ng`, true);
    const va = expectOk(await get(virtualAccountGet, { token: u.accessToken }));
    const first = await paystack.dvaDeposit(va.account_number!, 150_000_00);
    expect(first.responses[0]?.status).toBe(200);
    await paystack.dvaDeposit(va.account_number!, 1_000_00);
    expect(await walletKobo(u.id)).toBe(151_000_00);
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
    expect(needed[0]!.content).toContain('NGN 100,000.00');
    expect(await lastSms(u.phone)).toContain('Verify your identity');
    // and the over-limit money still moves out and into escrows within the single limit
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).used_today).toBe(151_000);
  });

  it('releases into a wallet above the balance limit are credited', async () => {
    const deal = await newDeal({ amount: 10_000 });
    const payee = deal.payee;
    await creditOverDays(payee, 100_000); // the tier 0 balance, full
    await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
    expectOk(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId));
    expectOk(await escrowOp('escrow-deliver', payee, deal.escrowId));
    expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    expect(await walletKobo(payee.id)).toBe(100_000_00 + Math.round(deal.feeBreakdown.seller_payout * 100));
    await expectLedgerInvariants();
  });

  it('raising the tier lifts the limit at once', async () => {
    const u = await signUp();
    expectOverLimit(await topup(u, 30_000), 'amount', 1);
    expect(await raiseTier(u.id, 1)).toBe(1);
    expectOk(await topup(u, 30_000));
  });
});
