// Reconciliation by the job: movements still pending 30 minutes after they started are settled
// from what Paystack's verify endpoints say, once, whatever webhook comes (or not) afterwards.
import { describe, expect, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { fundWallet } from '../support/escrows.ts';
import { walletKobo } from '../support/ledger.ts';
import { runJobs } from '../support/clock.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000).toISOString();

async function statusOf(id: string): Promise<string> {
  const [row] = await testDb()<{ status: string }[]>`select status::text from public.transactions where id = ${id}`;
  return row?.status ?? 'missing';
}

async function withPayoutAccount(tier = 1): Promise<TestUser> {
  const user = await signUp({ tier });
  const account = `6${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`;
  await paystack.registerAccount('058', account, 'OBI ADA');
  const r = await post(payoutAdd, {
    bank_code: '058',
    bank_name: 'GTBank',
    account_number: account,
    account_name: 'Ada Obi',
  }, { token: user.accessToken });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return user;
}

describe('reconciliation of pending top-ups', () => {
  it('credits a top-up Paystack says succeeded when its webhook never came, and a late webhook adds nothing', async () => {
    const user = await signUp({ tier: 1 });
    const r = await post(walletTopup, { amount: 1200 }, { token: user.accessToken });
    const ref = r.body.data.reference as string;
    await paystack.chargeStatus(ref, 'success');
    await runJobs(minutesFromNow(5)); // too soon: not asked yet
    expect(await statusOf(ref)).toBe('pending');
    const job = await runJobs(minutesFromNow(31));
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect(await statusOf(ref)).toBe('succeeded');
    expect(await walletKobo(user.id)).toBe(120_000);
    await paystack.chargeSuccess(ref, { times: 2 });
    expect(await walletKobo(user.id)).toBe(120_000);
  });

  it('leaves an unfinished checkout pending for a day, then fails it; a failed charge fails at once', async () => {
    const user = await signUp({ tier: 1 });
    const a = (await post(walletTopup, { amount: 500 }, { token: user.accessToken })).body.data.reference as string;
    await runJobs(minutesFromNow(60));
    expect(await statusOf(a)).toBe('pending');
    // a day later: failed as abandoned (each run asks about 50, those not asked yet first, and
    // the other suites leave pending top-ups of their own: it may take more than one run)
    for (let run = 0; run < 12 && (await statusOf(a)) === 'pending'; run++) {
      await runJobs(minutesFromNow(25 * 60 + run));
    }
    expect(await statusOf(a)).toBe('failed');
    const b = (await post(walletTopup, { amount: 500 }, { token: user.accessToken })).body.data.reference as string;
    await paystack.chargeStatus(b, 'failed');
    await runJobs(minutesFromNow(31));
    expect(await statusOf(b)).toBe('failed');
    expect(await walletKobo(user.id)).toBe(0);
  });
});

describe('reconciliation of pending withdrawals', () => {
  it('returns the money once for a transfer Paystack says failed, whatever webhooks follow', async () => {
    const user = await withPayoutAccount();
    await fundWallet(user, 3000);
    const w = await post(walletWithdraw, { amount: 1000 }, { token: user.accessToken });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    expect(await walletKobo(user.id)).toBe(200_000);
    await paystack.transferStatus(w.body.data.id, 'failed');
    await runJobs(minutesFromNow(31));
    expect(await statusOf(w.body.data.id)).toBe('failed');
    expect(await walletKobo(user.id)).toBe(300_000);
    await paystack.transferOutcome(w.body.data.id, 'transfer.failed', { times: 2 });
    await runJobs(minutesFromNow(62));
    expect(await walletKobo(user.id)).toBe(300_000);
  });

  it('takes turns: 50 transfers still pending at Paystack do not keep a newer one from being settled', async () => {
    // a NGN 60,000 top-up and NGN 50,500 withdrawn in a day: over tier 0's and tier 1's single
    // limits (NGN 20,000 and 50,000), within tier 2's
    const user = await withPayoutAccount(2);
    await fundWallet(user, 60_000);
    const stuck: string[] = [];
    for (let i = 0; i < 50; i++) {
      const w = await post(walletWithdraw, { amount: 1000 }, { token: user.accessToken });
      expect(w.status, JSON.stringify(w.body)).toBe(200);
      stuck.push(w.body.data.id);
    }
    for (const id of stuck) await paystack.transferStatus(id, 'pending');
    const w = await post(walletWithdraw, { amount: 500 }, { token: user.accessToken });
    const newer = w.body.data.id as string;
    await paystack.transferStatus(newer, 'success');
    // each run asks about 50; the ones still pending go behind those not asked about yet
    let runs = 0;
    while ((await statusOf(newer)) === 'pending' && runs < 12) {
      runs++;
      await runJobs(minutesFromNow(31 + runs));
    }
    expect(await statusOf(newer)).toBe('succeeded');
    expect(runs).toBeGreaterThanOrEqual(1);
    for (const id of stuck) expect(await statusOf(id)).toBe('pending');
    const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.reconcile_checks where transaction_id = any(${stuck}::uuid[])`;
    expect(row?.n).toBe(50);
  });

  it('marks a transfer Paystack says succeeded, and fails one Paystack never received', async () => {
    const user = await withPayoutAccount();
    await fundWallet(user, 3000);
    const ok = (await post(walletWithdraw, { amount: 1000 }, { token: user.accessToken })).body.data.id as string;
    await paystack.transferStatus(ok, 'success');
    // a withdrawal whose transfer call never reached Paystack (the request died after the debit)
    const [lost] = await testDb()<{ id: string }[]>`
      select private.withdrawal_create(${user.id}, 50000, (select id from public.payout_accounts where user_id = ${user.id}), 'paystack') as id`;
    await testDb()`update public.transactions set created_at = created_at where id = ${lost?.id as string}`;
    expect(await walletKobo(user.id)).toBe(150_000);
    await runJobs(minutesFromNow(31));
    expect(await statusOf(ok)).toBe('succeeded');
    expect(await statusOf(lost?.id as string)).toBe('failed');
    expect(await walletKobo(user.id)).toBe(200_000);
    const wallet = await get(walletGet, { token: user.accessToken });
    expect(wallet.body.data).toMatchObject({ balance: 2000, pending_withdrawals: 0 });
  });
});
