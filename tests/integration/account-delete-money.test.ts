// Money the provider confirms after an account was deleted (docs/compliance.md#account-deletion),
// through the real server and the Paystack fake's webhooks: nobody can reach a deleted account's
// wallet, so what comes back or arrives late is booked to the suspense account and flagged for
// operators (private.payment_flags, reason deleted_account_deposit), once however often the
// webhook is delivered, and the ledger still balances.
import { describe, expect, it } from 'vitest';
import { expectOk, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { escrowOp, fundWallet, newDeal } from '../support/escrows.ts';
import { checkoutOf, newMerchant, newMerchantEscrow } from '../support/merchants.ts';
import { addPayout } from '../support/payouts.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { LEDGER_HOLDS, ledgerInvariants } from '../support/ledger-checks.ts';
import accountDelete from '../../supabase/functions/account-delete/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import { customerEmailOf } from '../support/paystack.ts';

// ---- helpers -------------------------------------------------------------------------------

/** Deletes `u`'s account through account-delete (a fresh code to their phone, their password). */
async function deleted(u: TestUser): Promise<void> {
  await testDb()`delete from private.rate_limit_events where key = ${`otp:resend:${u.phone}`}`;
  expectOk(await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }));
  const otp_code = await lastOtp(u.phone);
  expectOk(await post(accountDelete, { password: u.password, otp_code }, { token: u.accessToken }));
}

/** What the ledger moved into the suspense account for a transaction, in kobo. */
async function suspenseFor(txId: string): Promise<bigint> {
  const [row] = await testDb()<{ sum: string }[]>`
    select coalesce(sum(e.amount), 0)::text as sum
      from private.ledger_entries e
      join private.ledger_transfers t on t.id = e.transfer_id
      join private.ledger_accounts a on a.id = e.account_id
     where t.transaction_id = ${txId} and a.kind = 'suspense'`;
  return BigInt(row!.sum);
}

/** The deleted-account flags naming a transaction. */
const flagsFor = (txId: string) =>
  testDb()<{ received_amount: string; user_id: string }[]>`
    select received_amount::text, payload ->> 'user_id' as user_id from private.payment_flags
     where reason = 'deleted_account_deposit' and transaction_id = ${txId}`;

/** The balance of the user's wallet in the ledger (kobo), 0 when it has none. */
async function walletOf(userId: string): Promise<bigint> {
  const [row] = await testDb()<{ balance: string }[]>`
    select coalesce(sum(balance), 0)::text as balance from private.ledger_accounts
     where kind = 'user_wallet' and owner_id = ${userId}`;
  return BigInt(row!.balance);
}

// ---- webhook-payments ----------------------------------------------------------------------

describe('webhook-payments', () => {
  describe('a payout returned after its payee deleted the account', () => {
    for (const event of ['transfer.reversed', 'transfer.failed'] as const) {
      it(`${event}: to suspense, flagged once; replays move nothing; the ledger balances`, async () => {
        const x = await signUp({ tier: 1 });
        await fundWallet(x, 4_000);
        await addPayout(x);
        const w = await post(walletWithdraw, { amount: 4_000 }, { token: x.accessToken });
        expect(w.status, JSON.stringify(w.body)).toBe(200);
        const txId = w.body.data.id as string;
        expect((await paystack.transferOutcome(txId, 'transfer.success')).responses[0]?.status).toBe(200);
        await deleted(x);

        const back = await paystack.transferOutcome(txId, event, { times: 3, concurrent: true });
        expect(back.responses.map((r) => r.status)).toEqual([200, 200, 200]);
        // the other way of saying it later moves nothing either
        const other = event === 'transfer.reversed' ? 'transfer.failed' : 'transfer.reversed';
        expect((await paystack.transferOutcome(txId, other)).responses[0]?.status).toBe(200);

        expect(await suspenseFor(txId)).toBe(400_000n);
        expect(await walletOf(x.id)).toBe(0n);
        expect(await flagsFor(txId)).toEqual([{ received_amount: '400000', user_id: x.id }]);
        const [row] = await testDb()<{ status: string }[]>`
          select status::text from public.transactions where id = ${txId}`;
        expect(row).toEqual({ status: 'failed' });
        expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);
      });
    }
  });

  describe('a card charge confirmed after its payer deleted the account', () => {
    it('an app escrow cancelled before the deletion: the charge goes to suspense, flagged once; the webhook succeeds', async () => {
      const deal = await newDeal({ amount: 1_500, payerTier: 1 });
      const started = await escrowOp('escrow-fund', deal.payer, deal.escrowId, {
        method: 'card',
        callback_url: 'https://app.escrow.ng/funded',
      });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const reference = started.body.data.reference as string;
      expect((await escrowOp('escrow-cancel', deal.initiator, deal.escrowId)).status).toBe(200);
      await deleted(deal.payer);

      const total = BigInt(Math.round(deal.feeBreakdown.total_charge * 100));
      const d = await paystack.chargeSuccess(reference, { times: 3, concurrent: true });
      expect(d.responses.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(await suspenseFor(reference)).toBe(total);
      expect(await walletOf(deal.payer.id)).toBe(0n);
      expect(await flagsFor(reference)).toEqual([{ received_amount: String(total), user_id: deal.payer.id }]);
      const [row] = await testDb()<{ status: string; to_suspense: boolean }[]>`
        select status::text, metadata ? 'credited_to_suspense' as to_suspense from public.transactions where id = ${reference}`;
      expect(row).toEqual({ status: 'failed', to_suspense: true });
      expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);
    });

    it("a merchant escrow cancelled before the deletion: the buyer's charge is refunded through the provider", async () => {
      const m = await newMerchant();
      const buyer = await signUp({ tier: 3 });
      const { escrow } = await newMerchantEscrow(m, { buyer_phone: buyer.phone });
      const charge = await checkoutOf(escrow.id);
      expectOk(await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key }));
      await deleted(buyer);

      const d = await paystack.chargeSuccess(charge, { times: 2 });
      expect(d.responses.map((r) => r.status)).toEqual([200, 200]);
      const total = Math.round(escrow.fee_breakdown.total_charge * 100);
      await expect.poll(async () => (await paystack.refunds()).filter((r) => r.reference === charge).length, {
        timeout: 10_000,
      }).toBe(1);
      expect((await paystack.refunds()).filter((r) => r.reference === charge)).toMatchObject([{ amount: total }]);
      const refunds = await testDb()<{ user_id: string; amount: string }[]>`
        select user_id, amount::text from public.transactions where escrow_id = ${escrow.id} and type = 'escrow_refund'`;
      expect(refunds).toEqual([{ user_id: buyer.id, amount: String(total) }]);
      expect(await walletOf(buyer.id)).toBe(0n);
      expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);
    });
  });

  describe('a dedicated account assigned after the deletion', () => {
    it('stays inactive and nameless, its deactivation requested; money sent to it goes to suspense', async () => {
      const x = await signUp({ tier: 1, first_name: 'Zainab', last_name: 'Okafor' });
      expectOk(await post(virtualAccountCreate, {}, { token: x.accessToken }));
      const [pending] = await testDb()<{ status: string }[]>`
        select status from public.virtual_accounts where user_id = ${x.id}`;
      expect(pending?.status).toBe('pending');
      await deleted(x);

      const assigned = await paystack.assignOutcome(customerEmailOf(x.id), true, { times: 2 });
      expect(assigned.responses.map((r) => r.status)).toEqual([200, 200]);
      const [va] = await testDb()<
        { status: string; account_name: string | null; account_number: string; provider_account_id: string }[]
      >`select status, account_name, account_number, provider_account_id from public.virtual_accounts
         where user_id = ${x.id}`;
      expect(va).toMatchObject({ status: 'inactive', account_name: null });
      expect(va?.provider_account_id).toMatch(/^\d+$/);
      // one open flag, never tried yet: the job's next run asks the provider (account-delete.clock)
      const flags = await testDb()<{ provider_account_id: string; attempts: number; last_attempt_at: string | null }[]>`
        select details ->> 'provider_account_id' as provider_account_id, (details ->> 'attempts')::int as attempts,
               details ->> 'last_attempt_at' as last_attempt_at
          from private.operator_flags
         where kind = 'dedicated_account_deactivation_failed' and user_id = ${x.id} and resolved_at is null`;
      expect(flags).toEqual([{ provider_account_id: va!.provider_account_id, attempts: 0, last_attempt_at: null }]);

      const d = await paystack.dvaDeposit(va!.account_number, 150_000);
      expect(d.responses[0]?.status).toBe(200);
      const [flag] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.payment_flags
         where reason = 'deleted_account_deposit' and payload ->> 'user_id' = ${x.id}`;
      expect(flag).toEqual({ n: 1 });
      expect(await walletOf(x.id)).toBe(0n);
    });
  });
});
