// Value only for what the provider confirms (docs/security.md#2-value-only-for-what-the-provider-confirmed). A card charge.success whose amount
// or currency differs from what its pending transaction expects credits nothing by itself: the
// server asks Paystack's verify, credits the expected amount only when verify reports a success
// of exactly that amount in naira, and otherwise leaves the transaction pending, flagged and
// marked for review; reconciliation later settles it from Paystack's answer, flagging a success
// of another amount once and then leaving it to an operator. The SQL functions refuse a wrong
// amount on their own too. Runs the job with an explicit "now" (runJobs): the serial clock group.
import { randomInt } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { type Deal, escrowOp, escrowStatus, newDeal } from '../support/escrows.ts';
import { holdKobo, walletKobo } from '../support/ledger.ts';
import { runJobs } from '../support/clock.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
const RECEIVED = { success: true, status: 200, data: { received: true } };

interface TxRow {
  status: string;
  amount: string;
  metadata: Record<string, unknown>;
  provider_charge_id: string | null;
}

async function txRow(id: string): Promise<TxRow> {
  const [row] = await testDb()<TxRow[]>`
    select status::text, amount::text, metadata, provider_charge_id from public.transactions where id = ${id}`;
  if (!row) throw new Error(`no transaction ${id}`);
  return row;
}

const flags = (txId: string) =>
  testDb()<{ reason: string; expected_amount: string | null; received_amount: string | null; action: string | null }[]>`
    select reason, expected_amount::text, received_amount::text, payload ->> 'action' as action
      from private.payment_flags where transaction_id = ${txId} order by id`;

/** Ledger transfers recorded for a transaction (a credited top-up has exactly one). */
async function transfersOf(txId: string): Promise<number> {
  const [row] = await testDb()<
    { n: number }[]
  >`select count(*)::int as n from private.ledger_transfers where transaction_id = ${txId}`;
  return row?.n ?? 0;
}

async function verifyCalls(reference: string): Promise<number> {
  return (await paystack.requests(`/transaction/verify/${reference}`)).length;
}

async function pendingTopup(user: TestUser, naira: number): Promise<string> {
  const res = await post(walletTopup, { amount: naira }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.reference as string;
}

/** escrow-fund by card: a pending funding transaction whose id is the charge reference. */
async function startCardCharge(deal: Deal): Promise<string> {
  const res = await escrowOp('escrow-fund', deal.payer, deal.escrowId, {
    method: 'card',
    callback_url: 'https://app.escrow.ng/funded',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.reference as string;
}

/** A charge.success that the fake sends as is (verify keeps answering whatever it was told). */
function chargeEvent(reference: string, amount: number, currency: string | null = 'NGN') {
  return {
    id: randomInt(1, 2 ** 40),
    domain: 'test',
    status: 'success',
    reference,
    amount,
    ...(currency === null ? {} : { currency }),
    channel: 'card',
    gateway_response: 'Successful',
    paid_at: new Date().toISOString(),
    customer: { id: 1, email: 'someone@example.com', customer_code: 'CUS_x' },
  };
}

// Suites before this one leave pending charges behind (checkouts nobody completed). A run a day
// ahead fails them as abandoned, so the reconciliation runs below (at most 50 charges each) reach
// this file's transactions.
beforeAll(async () => {
  for (let i = 0; i < 40; i++) {
    const r = await runJobs(minutesFromNow(25 * 60));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    if (r.body.data.reconciled < 50) break;
  }
}, 240_000);

// ---- top-ups -------------------------------------------------------------------------------

describe('charge.success for a top-up with figures other than the pending ones', () => {
  it('an event claiming more than was asked, which Paystack confirms, credits nothing: pending, flagged, under review', async () => {
    const user = await signUp({ tier: 1 });
    const ref = await pendingTopup(user, 100); // 10,000 kobo expected
    await paystack.chargeStatus(ref, 'success', 1_000_000); // Paystack itself reports NGN 10,000
    const d = await paystack.chargeSuccess(ref, { amount: 1_000_000 });
    expect(d.responses[0]?.status).toBe(200);
    expect(d.responses[0]?.body).toEqual(RECEIVED);

    expect(await walletKobo(user.id)).toBe(0);
    const tx = await txRow(ref);
    expect(tx).toMatchObject({ status: 'pending', amount: '10000' });
    expect(tx.metadata.review).toMatchObject({
      reason: 'amount_mismatch',
      expected_amount: 10000,
      received_amount: 1_000_000,
      provider_status: 'success',
    });
    expect(await transfersOf(ref)).toBe(0);
    expect(await flags(ref)).toEqual([{
      reason: 'amount_mismatch',
      expected_amount: '10000',
      received_amount: '1000000',
      action: 'held_for_review',
    }]);
    expect(await verifyCalls(ref)).toBe(1);

    // redelivered: one effect, one flag
    await paystack.chargeSuccess(ref, { amount: 1_000_000, times: 2 });
    expect(await walletKobo(user.id)).toBe(0);
    expect(await flags(ref)).toHaveLength(1);

    // reconciliation: Paystack's answer is final and disagrees, so it is left to an operator:
    // never credited, never failed as abandoned, flagged no more
    await runJobs(minutesFromNow(31));
    await runJobs(minutesFromNow(32));
    await runJobs(minutesFromNow(25 * 60));
    expect((await txRow(ref)).status).toBe('pending');
    expect(await walletKobo(user.id)).toBe(0);
    expect(await flags(ref)).toHaveLength(1);
    await expectLedgerInvariants();
  });

  it('a charge in another currency credits nothing, and neither does one whose currency is missing and unconfirmed', async () => {
    const user = await signUp({ tier: 1 });
    const usd = await pendingTopup(user, 100);
    await paystack.chargeStatus(usd, 'success', 10_000, 'USD');
    const d = await paystack.chargeSuccess(usd, { currency: 'USD' }); // the same number, in cents
    expect(d.responses[0]?.body).toEqual(RECEIVED);
    expect(await walletKobo(user.id)).toBe(0);
    const tx = await txRow(usd);
    expect(tx.status).toBe('pending');
    expect(tx.metadata.review).toMatchObject({ reason: 'currency_mismatch', provider_status: 'success' });
    expect(await flags(usd)).toEqual([{
      reason: 'currency_mismatch',
      expected_amount: '10000',
      received_amount: '10000',
      action: 'held_for_review',
    }]);

    // no currency at all, and Paystack does not (yet) say it succeeded: nothing credited
    const bare = await pendingTopup(user, 250);
    const out = await paystack.deliver('charge.success', chargeEvent(bare, 25_000, null));
    expect(out.responses[0]?.body).toEqual(RECEIVED);
    expect(await walletKobo(user.id)).toBe(0);
    expect((await txRow(bare)).status).toBe('pending');
    expect((await txRow(bare)).metadata.review).toMatchObject({
      reason: 'currency_mismatch',
      provider_status: 'abandoned',
    });
    expect((await flags(bare)).map((f) => f.reason)).toEqual(['currency_mismatch']);
    await expectLedgerInvariants();
  });

  it('when verify confirms a success of the expected amount, exactly that amount is credited, once, and the event is flagged', async () => {
    const user = await signUp({ tier: 1 });
    const ref = await pendingTopup(user, 100);
    // Paystack charged the NGN 100 asked for; the event claims NGN 10,000
    const d = await paystack.chargeSuccess(ref, { amount: 1_000_000 });
    expect(d.responses[0]?.body).toEqual(RECEIVED);
    expect(await walletKobo(user.id)).toBe(10_000);
    const tx = await txRow(ref);
    expect(tx).toMatchObject({ status: 'succeeded', amount: '10000' });
    expect(tx.metadata.review).toBeUndefined();
    expect(tx.provider_charge_id).not.toBeNull();
    expect(await transfersOf(ref)).toBe(1);
    expect(await flags(ref)).toEqual([{
      reason: 'amount_mismatch',
      expected_amount: '10000',
      received_amount: '1000000',
      action: 'credited_verified_amount',
    }]);

    // other deliveries for the same charge, right or wrong, add nothing
    await paystack.chargeSuccess(ref, { amount: 1_000_000, times: 2 });
    await paystack.deliver('charge.success', chargeEvent(ref, 1_000_000));
    await paystack.deliver('charge.success', chargeEvent(ref, 10_000));
    expect(await walletKobo(user.id)).toBe(10_000);
    expect(await transfersOf(ref)).toBe(1);

    // a missing currency confirmed by verify is credited the same way
    const bare = await pendingTopup(user, 300);
    await paystack.chargeStatus(bare, 'success');
    await paystack.deliver('charge.success', chargeEvent(bare, 30_000, null));
    expect(await walletKobo(user.id)).toBe(40_000);
    expect((await txRow(bare)).status).toBe('succeeded');
    expect((await flags(bare)).map((f) => [f.reason, f.action])).toEqual([[
      'currency_mismatch',
      'credited_verified_amount',
    ]]);
    await expectLedgerInvariants();
  });
});

// ---- escrow charges ------------------------------------------------------------------------

describe('charge.success for an escrow card charge with figures other than the total', () => {
  it('a wrong amount Paystack does not confirm funds nothing and credits nothing: flagged, pending, under review', async () => {
    const deal = await newDeal({ amount: 4_000, payerTier: 1 });
    const ref = await startCardCharge(deal);
    const total = Math.round(deal.feeBreakdown.total_charge * 100);
    const received = total + 50_000;
    await paystack.chargeStatus(ref, 'success', received);
    const d = await paystack.chargeSuccess(ref, { amount: received });
    expect(d.responses[0]?.body).toEqual(RECEIVED);

    expect(await escrowStatus(deal)).toBe('draft');
    expect(await holdKobo(deal.escrowId)).toBe(0);
    expect(await walletKobo(deal.payer.id)).toBe(0);
    const tx = await txRow(ref);
    expect(tx.status).toBe('pending');
    expect(tx.metadata.credited_to_wallet).toBeUndefined();
    expect(tx.metadata.review).toMatchObject({
      reason: 'amount_mismatch',
      expected_amount: total,
      received_amount: received,
      provider_status: 'success',
    });
    expect(await flags(ref)).toEqual([{
      reason: 'amount_mismatch',
      expected_amount: String(total),
      received_amount: String(received),
      action: 'held_for_review',
    }]);
    const [deposits] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where user_id = ${deal.payer.id} and type = 'virtual_account_deposit'`;
    expect(deposits?.n).toBe(0);

    // reconciliation leaves it to an operator
    await runJobs(minutesFromNow(31));
    await runJobs(minutesFromNow(25 * 60));
    expect((await txRow(ref)).status).toBe('pending');
    expect(await flags(ref)).toHaveLength(1);
    expect(await walletKobo(deal.payer.id)).toBe(0);
    expect(await holdKobo(deal.escrowId)).toBe(0);
    await expectLedgerInvariants();
  });

  it('a wrong amount in the event that verify corrects funds the escrow with exactly the total', async () => {
    const deal = await newDeal({ amount: 3_000, payerTier: 1 });
    const ref = await startCardCharge(deal);
    const total = Math.round(deal.feeBreakdown.total_charge * 100);
    // Paystack charged the total; the event says less
    const d = await paystack.chargeSuccess(ref, { amount: total - 100 });
    expect(d.responses[0]?.body).toEqual(RECEIVED);
    expect(await escrowStatus(deal)).toBe('active');
    expect(await holdKobo(deal.escrowId)).toBe(total);
    expect(await walletKobo(deal.payer.id)).toBe(0);
    expect((await txRow(ref)).status).toBe('succeeded');
    expect((await flags(ref)).map((f) => [f.reason, f.action])).toEqual([[
      'amount_mismatch',
      'credited_verified_amount',
    ]]);
    await expectLedgerInvariants();
  });
});

// ---- reconciliation ------------------------------------------------------------------------

describe('reconciliation of a charge held for review', () => {
  it("settles it from Paystack's later answer: a success of the expected amount is credited, once", async () => {
    const user = await signUp({ tier: 1 });
    const ref = await pendingTopup(user, 100);
    // a disagreeing event while the checkout is still open: verify says abandoned
    await paystack.deliver('charge.success', chargeEvent(ref, 1_000_000));
    expect(await walletKobo(user.id)).toBe(0);
    expect((await txRow(ref)).metadata.review).toMatchObject({
      reason: 'amount_mismatch',
      provider_status: 'abandoned',
    });

    await paystack.chargeStatus(ref, 'success'); // the payer completed it: NGN 100
    await runJobs(minutesFromNow(31));
    const tx = await txRow(ref);
    expect(tx).toMatchObject({ status: 'succeeded', amount: '10000' });
    expect(tx.metadata.review).toBeUndefined();
    expect(await walletKobo(user.id)).toBe(10_000);
    await runJobs(minutesFromNow(32));
    await paystack.chargeSuccess(ref);
    expect(await walletKobo(user.id)).toBe(10_000);
    expect(await transfersOf(ref)).toBe(1);
    expect(await flags(ref)).toHaveLength(1);
    await expectLedgerInvariants();
  });

  it('a success of another amount found by reconciliation is flagged once and never credited or failed', async () => {
    const user = await signUp({ tier: 1 });
    const ref = await pendingTopup(user, 100);
    await paystack.chargeStatus(ref, 'success', 5_000); // the webhook was lost; Paystack says NGN 50
    await runJobs(minutesFromNow(31));
    const tx = await txRow(ref);
    expect(tx.status).toBe('pending');
    expect(tx.metadata.review).toMatchObject({
      reason: 'amount_mismatch',
      expected_amount: 10_000,
      received_amount: 5_000,
      provider_status: 'success',
    });
    expect(await walletKobo(user.id)).toBe(0);
    expect(await flags(ref)).toEqual([{
      reason: 'amount_mismatch',
      expected_amount: '10000',
      received_amount: '5000',
      action: 'held_for_review',
    }]);
    const asked = await verifyCalls(ref);
    for (const m of [32, 33, 25 * 60]) await runJobs(minutesFromNow(m));
    expect(await verifyCalls(ref)).toBe(asked); // out of the loop: not asked again
    expect((await txRow(ref)).status).toBe('pending');
    expect(await flags(ref)).toHaveLength(1);
    expect(await walletKobo(user.id)).toBe(0);

    // an escrow charge whose webhook never came, reported as a success of the total: funded
    const deal = await newDeal({ amount: 2_000, payerTier: 1 });
    const eref = await startCardCharge(deal);
    await paystack.chargeStatus(eref, 'success');
    await runJobs(minutesFromNow(31));
    expect(await escrowStatus(deal)).toBe('active');
    expect(await holdKobo(deal.escrowId)).toBe(Math.round(deal.feeBreakdown.total_charge * 100));
    await expectLedgerInvariants();
  });
});

// ---- the SQL functions on their own ---------------------------------------------------------

describe('the SQL functions credit only the expected amount, whoever calls them', () => {
  it('topup_succeed and escrow_charge_succeed with another amount return flagged and credit nothing', async () => {
    const user = await signUp({ tier: 1 });
    const ref = await pendingTopup(user, 100);
    const [t] = await testDb()<
      { outcome: string }[]
    >`select private.topup_succeed(${ref}, 1000000, 'CHG_sql', '{}'::jsonb) as outcome`;
    expect(t?.outcome).toBe('flagged');
    expect((await txRow(ref)).status).toBe('pending');
    expect(await walletKobo(user.id)).toBe(0);
    expect((await flags(ref)).map((f) => f.reason)).toEqual(['amount_mismatch']);
    // the expected amount still completes it
    const [ok] = await testDb()<
      { outcome: string }[]
    >`select private.topup_succeed(${ref}, 10000, 'CHG_sql', '{}'::jsonb) as outcome`;
    expect(ok?.outcome).toBe('succeeded');
    expect(await walletKobo(user.id)).toBe(10_000);
    expect((await txRow(ref)).metadata.review).toBeUndefined();

    const deal = await newDeal({ amount: 1_500, payerTier: 1 });
    const eref = await startCardCharge(deal);
    const total = Math.round(deal.feeBreakdown.total_charge * 100);
    const [e] = await testDb()<{ outcome: string }[]>`select private.escrow_charge_succeed(${eref}, ${
      total + 1
    }, 'CHG_sql_e', '{}'::jsonb) as outcome`;
    expect(e?.outcome).toBe('flagged');
    expect((await txRow(eref)).status).toBe('pending');
    expect(await walletKobo(deal.payer.id)).toBe(0);
    expect(await holdKobo(deal.escrowId)).toBe(0);

    // the right amount for an escrow that can no longer be funded is the payer's, in the wallet
    expect((await escrowOp('escrow-cancel', deal.initiator, deal.escrowId)).status).toBe(200);
    const [late] = await testDb()<
      { outcome: string }[]
    >`select private.escrow_charge_succeed(${eref}, ${total}, 'CHG_sql_e', '{}'::jsonb) as outcome`;
    expect(late?.outcome).toBe('credited_to_wallet');
    expect(await walletKobo(deal.payer.id)).toBe(total);
    await expectLedgerInvariants();
  });

  it('each is executable by service_role only, never by anon or authenticated', async () => {
    const rows = await testDb()<{ name: string; anon: boolean; authenticated: boolean; service: boolean }[]>`
      select p.proname::text as name,
             has_function_privilege('anon', p.oid, 'EXECUTE') as anon,
             has_function_privilege('authenticated', p.oid, 'EXECUTE') as authenticated,
             has_function_privilege('service_role', p.oid, 'EXECUTE') as service
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'private' and p.proname in ('topup_succeed', 'escrow_charge_succeed', 'charge_hold_for_review')
       order by 1`;
    expect(rows).toEqual(
      ['charge_hold_for_review', 'escrow_charge_succeed', 'topup_succeed'].map((name) => ({
        name,
        anon: false,
        authenticated: false,
        service: true,
      })),
    );
  });
});
