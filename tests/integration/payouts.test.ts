// One payout path (shared/money/payouts.ts) for withdrawals and escrow payouts: both name the configured
// payments provider, both are handed to the provider the same way, and an escrow payout that
// cannot even get a transfer recipient fails at once (money back in the wallet), as a withdrawal does.
// The payees are at tier 1: a release to a tier-0 payee stays in the wallet and starts no payout
// (the identity floor, tests/integration/kyc-floor.test.ts).
import { randomInt } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { getConfig } from '../../shared/core/config.ts';
import { asService, closeDb } from '../../shared/core/db.ts';
import { startEscrowPayout } from '../../shared/money/payouts.ts';
import { get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { type Deal, escrowOp, fundedDeal, fundWallet } from '../support/escrows.ts';
import { raiseTier } from '../support/kyc.ts';
import { balances } from '../support/ledger.ts';
import { paystack } from '../support/paystack.ts';
import type { TestUser } from '../support/users.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

afterAll(() => closeDb());

const newAccountNumber = () => `3${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;

async function addPayout(user: TestUser, accountNumber = newAccountNumber()): Promise<string> {
  await paystack.registerAccount('058', accountNumber, 'COU OBI');
  const res = await post(
    payoutAdd,
    { bank_code: '058', bank_name: 'GTBank', account_number: accountNumber, account_name: 'Cou Obi' },
    { token: user.accessToken },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return accountNumber;
}

interface PayoutRow {
  id: string;
  type: string;
  status: string;
  provider: string;
  attempted: boolean;
  provider_transfer_id: string | null;
}

/** A funded deal whose payee is at tier 1, so that a release pays out to the payee's bank. */
async function payingOutDeal(amount: number): Promise<Deal> {
  const deal = await fundedDeal({ category: 'p2p_crypto', amount });
  expect(await raiseTier(deal.payee.id, 1)).toBe(1);
  return deal;
}

const payoutRow = async (id: string) =>
  (await testDb()<PayoutRow[]>`
    select id, type, status::text, provider, metadata ? 'transfer_attempted_at' as attempted, provider_transfer_id
      from public.transactions where id = ${id}`)[0];

const transfersFor = async (reference: string) =>
  (await paystack.requests('/transfer')).filter((r) => r.body?.reference === reference);

/**
 * Releases deal's escrow by calling the transition as escrow-release does, in a transaction that
 * says `provider` is configured (as shared/core/db.ts says it on every transaction), and commits it
 * without sending the payout: the process "died" before the provider was called.
 */
async function releaseConfiguredWith(deal: Deal, provider: string): Promise<string> {
  const payoutTx = await testDb().begin(async (tx) => {
    await tx`select set_config('escrow.payments_provider', ${provider}, true)`;
    const [r] = await tx<{ payout_tx: string }[]>`
      select payout_tx from private.escrow_release(${deal.escrowId}, ${deal.payer.id}, now())`;
    return r?.payout_tx;
  });
  expect(payoutTx).toBeTruthy();
  return payoutTx as string;
}

describe('the payments provider a payout names', () => {
  it('is the configured one, for a withdrawal and for an escrow payout alike', async () => {
    const configured = getConfig().PAYMENTS_PROVIDER; // the test stack runs the Paystack adapter
    const deal = await payingOutDeal(20_000);
    await addPayout(deal.payee);
    expect((await escrowOp('escrow-release', deal.payer, deal.escrowId)).status).toBe(200);
    const [payout] = await testDb()<{ id: string }[]>`
      select id from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_payout'`;
    expect(await payoutRow(payout!.id)).toMatchObject({ status: 'pending', provider: configured, attempted: true });

    await fundWallet(deal.payee, 500);
    const w = await post(walletWithdraw, { amount: 500 }, { token: deal.payee.accessToken });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    expect(w.body.data).toMatchObject({ type: 'withdrawal', provider: configured });
  });

  it('is what the transaction was told (escrow.payments_provider): the release does not hard-code one', async () => {
    const deal = await payingOutDeal(15_000);
    await addPayout(deal.payee);
    for (const provider of ['sandbox', 'paystack']) {
      // released and looked at inside one transaction, then rolled back: the escrow stays funded
      const rollback = new Error('rollback');
      let seen: { type: string; provider: string } | undefined;
      await testDb()
        .begin(async (tx) => {
          await tx`select set_config('escrow.payments_provider', ${provider}, true)`;
          const [r] = await tx<{ payout_tx: string }[]>`
            select payout_tx from private.escrow_release(${deal.escrowId}, ${deal.payer.id}, now())`;
          [seen] = await tx<{ type: string; provider: string }[]>`
            select type, provider from public.transactions where id = ${r?.payout_tx ?? null}`;
          throw rollback;
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
      expect(seen).toEqual({ type: 'escrow_payout', provider });
    }
  });

  it('is told to SQL by every service transaction of the functions', async () => {
    const [row] = await asService((tx) =>
      tx<{ setting: string; provider: string }[]>`
      select current_setting('escrow.payments_provider') as setting, private.payments_provider() as provider`
    );
    expect(row).toEqual({ setting: getConfig().PAYMENTS_PROVIDER, provider: getConfig().PAYMENTS_PROVIDER });
  });

  it('is, once sent, the provider the payout module sent it through', async () => {
    // created by a transaction configured for the sandbox; sent by functions configured for Paystack
    const deal = await payingOutDeal(12_000);
    await addPayout(deal.payee);
    const ref = await releaseConfiguredWith(deal, 'sandbox');

    const sent = await startEscrowPayout(ref);
    expect(sent).toMatchObject({ status: 'sent', transferCode: expect.stringMatching(/^TRF_/) });
    expect(await payoutRow(ref)).toMatchObject({ status: 'pending', provider: 'paystack', attempted: true });
    expect(await transfersFor(ref)).toHaveLength(1);
    // attempted once: never sent again
    expect(await startEscrowPayout(ref)).toBeNull();
    expect(await transfersFor(ref)).toHaveLength(1);
  });
});

describe('an escrow payout that cannot get a transfer recipient', () => {
  it("fails at once: nothing sent, the money back in the payee's wallet, the payee told", async () => {
    const deal = await payingOutDeal(20_000);
    const accountNumber = newAccountNumber();
    // Paystack is down for this account's recipient: payout-add keeps it without a recipient code
    await paystack.fail({ path: '/transferrecipient', field: 'account_number', value: accountNumber }, 'unavailable');
    await addPayout(deal.payee, accountNumber);

    expect((await escrowOp('escrow-release', deal.payer, deal.escrowId)).status).toBe(200);
    const [payout] = await testDb()<{ id: string }[]>`
      select id from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_payout'`;
    const row = await payoutRow(payout!.id);
    expect(row).toMatchObject({ status: 'failed', attempted: true, provider_transfer_id: null });
    expect(await transfersFor(payout!.id)).toEqual([]);
    const payoutKobo = Math.round(deal.feeBreakdown.seller_payout * 100);
    expect(await balances(deal)).toEqual({ payer: 0, payee: payoutKobo, hold: 0 });
    const query = { escrow_id: deal.escrowId };
    const notes = await get(notificationList, { token: deal.payee.accessToken, query });
    const failed = (notes.body.data as { event_type: string }[]).filter((n) => n.event_type === 'payout_failed');
    expect(failed).toHaveLength(1);
  });
});
