// deno-lint-ignore-file no-explicit-any -- database rows' metadata read as untyped JSON
// The money actions of finance operators through the real server, with the Paystack fake saying
// what its verify answers: a held charge credited at the verified amount (once, the ledger
// balanced), four eyes above FOUR_EYES_MIN_AMOUNT with ten approvals racing, a verified failure
// failed with no money, a pending verify refused; a failed payout retried once after the
// provider confirms the failure, ten retries racing sending one transfer, a retry refused when the
// old transfer succeeded or the payee is frozen; the roles that may act.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError as refused, expectOk as ok, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { fundWallet } from '../support/escrows.ts';
import { merchantWithFee } from '../support/merchants.ts';
import { walletKobo } from '../support/ledger.ts';
import { transactionsDisagreeing } from '../support/ledger-checks.ts';
import { newOperator, type TestOperator } from '../support/operators.ts';
import { addPayout } from '../support/payouts.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import adminApprovalDecide from '../../supabase/functions/admin-approval-decide/handler.ts';
import adminChargeResolve from '../../supabase/functions/admin-charge-resolve/handler.ts';
import adminPayoutRetry from '../../supabase/functions/admin-payout-retry/handler.ts';
import payoutRemove from '../../supabase/functions/payout-remove/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

const REASON = 'The provider confirmed it; the customer called support';

/** A top-up of `naira` whose charge.success brought `verifiedKobo`, which verify confirms: held for review. */
async function heldTopup(user: TestUser, naira: number, verifiedKobo: number): Promise<string> {
  const res = ok(await post(walletTopup, { amount: naira }, { token: user.accessToken }));
  const reference = res.reference;
  await paystack.chargeStatus(reference, 'success', verifiedKobo);
  const delivered = await paystack.chargeSuccess(reference, { amount: verifiedKobo });
  expect(delivered.responses[0]?.status).toBe(200);
  const [row] = await txRow(reference);
  expect(row?.status).toBe('pending');
  expect(row?.metadata.review).toMatchObject({ provider_status: 'success' });
  return reference;
}

const txRow = (id: string) =>
  testDb()<{ status: string; amount: string; type: string; metadata: Record<string, any> }[]>`
    select status::text as status, amount::text as amount, type, metadata from public.transactions where id = ${id}`;

const auditOf = (action: string, targetId: string) =>
  testDb()<{ admin_id: string; reason: string; details: Record<string, unknown> }[]>`
    select admin_id, reason, details from private.admin_audit where action = ${action} and target_id = ${targetId}`;

/** The operator's roles granted 25 hours ago: old enough to approve (four eyes' tenure). */
const backdate = (op: TestOperator) =>
  testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${op.id}`;

async function expectMoneyAgrees(userIds: string[]): Promise<void> {
  await expectLedgerInvariants();
  expect(await transactionsDisagreeing(testDb(), userIds)).toEqual([]);
}

describe('admin-charge-resolve', () => {
  it('credits a held top-up at the amount the provider verified, once', async () => {
    const finance = await newOperator(['finance']);
    const user = await signUp({ tier: 1 });
    const reference = await heldTopup(user, 5_000, 300_000); // NGN 5,000 expected, NGN 3,000 verified
    expect(await walletKobo(user.id)).toBe(0);

    const res = ok(
      await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: finance.accessToken }),
    );
    expect(res).toEqual({
      transaction_id: reference,
      provider_status: 'success',
      verified_amount: 3_000,
      expected_amount: 5_000,
      outcome: 'credited',
    });
    expect(await walletKobo(user.id)).toBe(300_000);
    const [row] = await txRow(reference);
    expect(row).toMatchObject({ status: 'succeeded', amount: '300000' });
    expect(row?.metadata).not.toHaveProperty('review');

    // a second resolution finds nothing held, and credits nothing
    refused(
      await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: finance.accessToken }),
      409,
      'charge_not_held',
    );
    expect(await walletKobo(user.id)).toBe(300_000);
    await expectMoneyAgrees([user.id]);

    const audit = await auditOf('charge.resolve', reference);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      admin_id: finance.id,
      reason: REASON,
      details: { provider_status: 'success', verified_amount: 300_000, expected_amount: 500_000, outcome: 'credited' },
    });
  });

  it('a NGN 2,000,000 held charge waits for a second finance operator; ten approvals at once credit it once', async () => {
    const first = await newOperator(['finance']);
    const second = await newOperator(['finance']);
    await backdate(second);
    const user = await signUp({ tier: 3 });
    const reference = await heldTopup(user, 5_000, 200_000_000);

    const asked = await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, {
      token: first.accessToken,
    });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    const approval = (asked.body.data as { approval: Record<string, any> }).approval;
    expect(approval).toMatchObject({
      action: 'charge.resolve',
      target_type: 'transaction',
      target_id: reference,
      amount: 2_000_000,
      roles: ['finance'],
      status: 'pending',
    });
    expect(await walletKobo(user.id)).toBe(0);
    expect((await txRow(reference))[0]?.status).toBe('pending');

    // the operator who asked cannot approve it
    refused(
      await post(adminApprovalDecide, { approval_id: approval.id, decision: 'approve', reason: REASON }, {
        token: first.accessToken,
      }),
      409,
      'approval_own_action',
    );
    expect(await walletKobo(user.id)).toBe(0);

    const decisions = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          post(adminApprovalDecide, {
            approval_id: approval.id,
            decision: 'approve',
            reason: 'Checked it on the dashboard',
          }, {
            token: second.accessToken,
          }),
      ),
    );
    const statuses = decisions.map((d) => d.status);
    expect(statuses.filter((s) => s === 200), JSON.stringify(decisions.map((d) => d.body))).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 409), JSON.stringify(statuses)).toBe(true);
    expect(await walletKobo(user.id)).toBe(200_000_000);
    const [row] = await txRow(reference);
    expect(row).toMatchObject({ status: 'succeeded', amount: '200000000' });
    const [transfers] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.ledger_transfers where transaction_id = ${reference}`;
    expect(transfers?.n).toBe(1);
    await expectMoneyAgrees([user.id]);
    const audit = await auditOf('charge.resolve', reference);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ admin_id: second.id, details: { approval_id: approval.id } });
  });

  it('fails a held charge the provider verifies as failed, with no money', async () => {
    const finance = await newOperator(['finance']);
    const user = await signUp({ tier: 1 });
    const reference = await heldTopup(user, 5_000, 300_000);
    await paystack.chargeStatus(reference, 'failed');

    const res = ok(
      await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: finance.accessToken }),
    );
    expect(res).toMatchObject({ provider_status: 'failed', verified_amount: null, outcome: 'failed' });
    expect((await txRow(reference))[0]?.status).toBe('failed');
    expect(await walletKobo(user.id)).toBe(0);
    await expectMoneyAgrees([user.id]);
  });

  it('refuses while the provider says pending, or cannot be reached; nothing changes', async () => {
    const finance = await newOperator(['finance']);
    const user = await signUp({ tier: 1 });
    const reference = await heldTopup(user, 5_000, 300_000);
    await paystack.chargeStatus(reference, 'pending');
    refused(
      await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: finance.accessToken }),
      409,
      'charge_not_settled',
    );
    await paystack.fail({ path: '/transaction/verify', field: 'reference', value: reference }, 'unavailable');
    refused(
      await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: finance.accessToken }),
      503,
      'provider_unavailable',
    );
    const [row] = await txRow(reference);
    expect(row?.status).toBe('pending');
    expect(row?.metadata.review).toBeDefined();
    expect(await walletKobo(user.id)).toBe(0);
    expect(await auditOf('charge.resolve', reference)).toEqual([]);
  });

  it('404 for an unknown charge; 409 for a charge not held', async () => {
    const finance = await newOperator(['finance']);
    refused(
      await post(adminChargeResolve, { transaction_id: randomUUID(), reason: REASON }, { token: finance.accessToken }),
      404,
      'charge_not_found',
    );
    const user = await signUp({ tier: 1 });
    const plain = ok(await post(walletTopup, { amount: 1_000 }, { token: user.accessToken }));
    refused(
      await post(adminChargeResolve, { transaction_id: plain.reference, reason: REASON }, {
        token: finance.accessToken,
      }),
      409,
      'charge_not_held',
    );
  });

  it('support and disputes operators get 403 operator_role_required; anyone else 404', async () => {
    const user = await signUp({ tier: 1 });
    const reference = await heldTopup(user, 5_000, 300_000);
    for (const roles of [['support'], ['disputes']] as const) {
      const op = await newOperator([...roles]);
      refused(
        await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: op.accessToken }),
        403,
        'operator_role_required',
      );
    }
    refused(
      await post(adminChargeResolve, { transaction_id: reference, reason: REASON }, { token: user.accessToken }),
      404,
    );
    expect((await txRow(reference))[0]?.status).toBe('pending');
    expect(await walletKobo(user.id)).toBe(0);
  });
});

describe('admin-payout-retry', () => {
  /**
   * A user at `tier` with `funded` naira in the wallet whose withdrawal of `amount` naira failed at
   * the provider (money back); NGN 2,000 of NGN 5,000 at tier 1 unless told.
   */
  async function failedWithdrawal(
    { tier = 1, funded = 5_000, amount = 2_000 } = {},
  ): Promise<{ user: TestUser; payout: string }> {
    const user = await signUp({ tier });
    await fundWallet(user, funded);
    await addPayout(user);
    const w = ok(await post(walletWithdraw, { amount }, { token: user.accessToken }));
    expect(w.status).toBe('pending');
    await paystack.transferOutcome(w.id, 'transfer.failed');
    expect((await txRow(w.id))[0]?.status).toBe('failed');
    expect(await walletKobo(user.id)).toBe(funded * 100);
    return { user, payout: w.id };
  }

  /**
   * What a refused retry must leave as it was: the user's wallet, their transactions (no new
   * withdrawal, the old one not marked retried), the transfers asked of the provider for them, the
   * ledger's transfers touching their wallet, and the payout.retry audit.
   */
  async function stateOf(userId: string, payout: string) {
    const txs = await testDb()<{ id: string; status: string; metadata: Record<string, any> }[]>`
      select id, status::text as status, metadata from public.transactions where user_id = ${userId} order by id`;
    const [ledger] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.ledger_entries e
        join private.ledger_accounts a on a.id = e.account_id
       where a.kind = 'user_wallet' and a.owner_id = ${userId}`;
    return {
      wallet: await walletKobo(userId),
      txs,
      transfers: (await transfersTo(txs.map((t) => t.id))).length,
      ledger: ledger?.n,
      audit: await auditOf('payout.retry', payout),
    };
  }

  const retriesOf = (payout: string) =>
    testDb()<{ id: string; status: string; amount: string }[]>`
      select id, status::text as status, amount::text as amount from public.transactions
       where metadata ->> 'retry_of' = ${payout}`;

  const transfersTo = async (references: string[]) =>
    (await paystack.requests('/transfer')).filter((r) => r.method === 'POST' && references.includes(r.body.reference));

  it('sends a failed payout again once the provider confirms the failure, once', async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();

    const res = ok(
      await post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: finance.accessToken }),
    ) as { transaction_id: string };
    expect(res).toMatchObject({ retry_of: payout, amount: 2_000, status: 'pending', old_transfer_status: 'failed' });
    expect(res.transaction_id).not.toBe(payout);
    const retries = await retriesOf(payout);
    expect(retries).toEqual([{ id: res.transaction_id, status: 'pending', amount: '200000' }]);
    expect(await transfersTo([res.transaction_id])).toHaveLength(1);
    expect(await walletKobo(user.id)).toBe(300_000);

    refused(
      await post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: finance.accessToken }),
      409,
      'payout_already_retried',
    );
    expect(await retriesOf(payout)).toHaveLength(1);
    await expectMoneyAgrees([user.id]);
    const audit = await auditOf('payout.retry', payout);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      admin_id: finance.id,
      details: { retry_transaction_id: res.transaction_id, amount: 200_000, old_transfer_status: 'failed' },
    });
  });

  it('ten retries at once send one transfer', async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    const answers = await Promise.all(
      Array.from(
        { length: 10 },
        () => post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: finance.accessToken }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200), JSON.stringify(answers.map((a) => a.body))).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const retries = await retriesOf(payout);
    expect(retries).toHaveLength(1);
    expect(await transfersTo(retries.map((r) => r.id))).toHaveLength(1);
    expect(await walletKobo(user.id)).toBe(300_000);
    await expectMoneyAgrees([user.id]);
  });

  it('refuses when the provider says the old transfer succeeded (or is still pending)', async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    for (const status of ['success', 'pending']) {
      await paystack.transferStatus(payout, status);
      const res = await post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, {
        token: finance.accessToken,
      });
      refused(res, 409, 'payout_not_failed');
      expect(res.body.error).toContain(status);
    }
    expect(await retriesOf(payout)).toEqual([]);
    expect(await walletKobo(user.id)).toBe(500_000);
    expect(await auditOf('payout.retry', payout)).toEqual([]);
  });

  it("a frozen payee's payout is refused 403 account_frozen; nothing leaves the wallet", async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    await testDb()`select * from private.user_freeze(${user.id}, ${finance.id}, 'Suspected fraud on this account')`;
    refused(
      await post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: finance.accessToken }),
      403,
      'account_frozen',
    );
    expect(await retriesOf(payout)).toEqual([]);
    expect(await walletKobo(user.id)).toBe(500_000);
    await expectMoneyAgrees([user.id]);
  });

  const retry = (finance: TestOperator, payout: string) =>
    post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: finance.accessToken });

  it('409 insufficient_funds when the wallet no longer holds the amount; nothing moves', async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    // the user spent the money meanwhile: NGN 4,000 of the NGN 5,000 out again
    ok(await post(walletWithdraw, { amount: 4_000 }, { token: user.accessToken }));
    expect(await walletKobo(user.id)).toBe(100_000);
    const before = await stateOf(user.id, payout);
    refused(await retry(finance, payout), 409, 'insufficient_funds');
    expect(await stateOf(user.id, payout)).toEqual(before);
    expect(before.audit).toEqual([]);
    await expectMoneyAgrees([user.id]);
  });

  it('404 payout_account_not_found when the payee removed the account; nothing moves', async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    const [row] = await txRow(payout);
    ok(
      await post(payoutRemove, { payout_account_id: row!.metadata.payout_account_id }, { token: user.accessToken }),
    );
    const before = await stateOf(user.id, payout);
    refused(await retry(finance, payout), 404, 'payout_account_not_found');
    expect(await stateOf(user.id, payout)).toEqual(before);
    expect(await walletKobo(user.id)).toBe(500_000);
    await expectMoneyAgrees([user.id]);
  });

  it("403 kyc_tier_required when the payee's tier no longer moves money; nothing moves", async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    await testDb()`update private.users set kyc_tier = 0 where id = ${user.id}`;
    const before = await stateOf(user.id, payout);
    refused(await retry(finance, payout), 403, 'kyc_tier_required');
    expect(await stateOf(user.id, payout)).toEqual(before);
    expect(await walletKobo(user.id)).toBe(500_000);
    await expectMoneyAgrees([user.id]);
  });

  it("403 kyc_limit_exceeded when the payout is over the payee's tier's single limit now; nothing moves", async () => {
    const finance = await newOperator(['finance']);
    // NGN 60,000 failed at tier 3; at tier 1 a single withdrawal is at most NGN 50,000
    const { user, payout } = await failedWithdrawal({ tier: 3, funded: 80_000, amount: 60_000 });
    await testDb()`update private.users set kyc_tier = 1 where id = ${user.id}`;
    const before = await stateOf(user.id, payout);
    const res = await retry(finance, payout);
    refused(res, 403, 'kyc_limit_exceeded');
    expect(await stateOf(user.id, payout)).toEqual(before);
    expect(await walletKobo(user.id)).toBe(8_000_000);
    await expectMoneyAgrees([user.id]);
  });

  it("409 payout_retry_unsupported for a merchant's failed withdrawal; its money stays in the merchant wallet", async () => {
    const finance = await newOperator(['finance']);
    const m = await merchantWithFee(1_000, 'Retry Shop');
    await addPayout(m.owner);
    const w = ok(
      await post('merchant-withdraw', { amount: 1_000 }, {
        token: m.owner.accessToken,
        headers: { 'Idempotency-Key': randomUUID() },
      }),
    );
    await paystack.transferOutcome(w.id, 'transfer.failed');
    expect((await txRow(w.id))[0]?.status).toBe('failed');
    const merchantWallet = async () =>
      Number(
        (await testDb()<{ b: string }[]>`select private.merchant_wallet_balance(${m.id})::text as b`)[0]!.b,
      );
    expect(await merchantWallet()).toBe(100_000);
    const before = await stateOf(m.owner.id, w.id);
    refused(await retry(finance, w.id), 409, 'payout_retry_unsupported');
    expect(await stateOf(m.owner.id, w.id)).toEqual(before);
    expect(await retriesOf(w.id)).toEqual([]);
    expect(await merchantWallet()).toBe(100_000);
    await expectLedgerInvariants();
  });

  it('503 provider_unavailable when the provider cannot confirm the failure; nothing is sent', async () => {
    const finance = await newOperator(['finance']);
    const { user, payout } = await failedWithdrawal();
    await paystack.fail({ path: '/transfer/verify', field: 'reference', value: payout }, 'unavailable');
    const before = await stateOf(user.id, payout);
    refused(await retry(finance, payout), 503, 'provider_unavailable');
    expect(await stateOf(user.id, payout)).toEqual(before);
    expect(await walletKobo(user.id)).toBe(500_000);
    await expectMoneyAgrees([user.id]);
  });

  it('404 for an unknown payout; 409 for one not failed', async () => {
    const finance = await newOperator(['finance']);
    refused(
      await post(adminPayoutRetry, { transaction_id: randomUUID(), reason: REASON }, { token: finance.accessToken }),
      404,
      'payout_not_found',
    );
    const user = await signUp({ tier: 1 });
    await fundWallet(user, 5_000);
    await addPayout(user);
    const w = ok(await post(walletWithdraw, { amount: 1_000 }, { token: user.accessToken }));
    refused(
      await post(adminPayoutRetry, { transaction_id: w.id, reason: REASON }, { token: finance.accessToken }),
      409,
      'payout_not_failed',
    );
  });

  it('support and disputes operators get 403 operator_role_required; anyone else 404', async () => {
    const { user, payout } = await failedWithdrawal();
    for (const roles of [['support'], ['disputes']] as const) {
      const op = await newOperator([...roles]);
      refused(
        await post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: op.accessToken }),
        403,
        'operator_role_required',
      );
    }
    refused(await post(adminPayoutRetry, { transaction_id: payout, reason: REASON }, { token: user.accessToken }), 404);
    expect(await retriesOf(payout)).toEqual([]);
  });
});
