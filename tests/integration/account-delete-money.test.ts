// Money the provider confirms after an account was deleted (docs/compliance.md#account-deletion),
// through the real server and the Paystack fake's webhooks: nobody can reach a deleted account's
// wallet, so what comes back or arrives late is booked to the suspense account and flagged for
// operators (private.payment_flags, reason deleted_account_deposit), once however often the
// webhook is delivered, and the ledger still balances.
import { describe, expect, it } from 'vitest';
import { expectOk, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { fundWallet } from '../support/escrows.ts';
import { addPayout } from '../support/payouts.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { LEDGER_HOLDS, ledgerInvariants } from '../support/ledger-checks.ts';
import accountDelete from '../../supabase/functions/account-delete/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

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
});
