// wallet-withdraw through the real server and the Paystack fake: the amount leaves the available
// balance at once, the /transfer carries our transaction id as reference, and the transfer
// webhooks settle it exactly once (a failure or reversal puts the money back once, never twice).
// The users who top up and withdraw are at tier 1: at tier 0 (phone only) the identity floor
// refuses both (tests/integration/kyc-floor.test.ts).
import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fieldsOf, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import payoutList from '../../supabase/functions/payout-list/handler.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const BANK_CODE = '058';

/** A new user at tier 1, the lowest tier that may top up and withdraw. */
const verified = () => signUp({ tier: 1 });

/** A fresh 10-digit account number nobody else in the run uses. */
const newAccountNumber = () => `0${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;

/** Tops the wallet up by card and completes it with charge.success. */
async function fund(user: TestUser, naira: number): Promise<void> {
  const res = await post(walletTopup, { amount: naira }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const delivered = await paystack.chargeSuccess(res.body.data.reference);
  expect(delivered.responses[0]?.status).toBe(200);
}

/** Saves a payout account whose name the fake bank confirms (so it verifies). */
async function addPayout(
  user: TestUser,
  accountNumber = newAccountNumber(),
): Promise<{ id: string; accountNumber: string }> {
  await paystack.registerAccount(BANK_CODE, accountNumber, 'ADA OBI');
  const res = await post(
    payoutAdd,
    { bank_code: BANK_CODE, bank_name: 'Guaranty Trust Bank', account_number: accountNumber, account_name: 'Ada Obi' },
    { token: user.accessToken },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data).toMatchObject({ verified: true });
  return { id: res.body.data.id, accountNumber };
}

async function wallet(user: TestUser) {
  const w = await get(walletGet, { token: user.accessToken });
  expect(w.status, JSON.stringify(w.body)).toBe(200);
  return w.body.data as { balance: number; pending_withdrawals: number; pending_deposits: number };
}

async function txRow(id: string) {
  const [row] = await testDb()<
    {
      status: string;
      type: string;
      amount: string;
      provider_transfer_id: string | null;
      metadata: Record<string, unknown>;
      completed_at: Date | null;
    }[]
  >`select status, type, amount::text as amount, provider_transfer_id, metadata, completed_at from public.transactions where id = ${id}`;
  return row;
}

const withdrawals = (userId: string) =>
  testDb()<{ id: string; status: string }[]>`
    select id, status::text from public.transactions where user_id = ${userId} and type = 'withdrawal' order by created_at`;

/** The user's wallet ledger account: its stored balance and the sum of its entries (kobo). */
async function ledgerWallet(userId: string) {
  const [row] = await testDb()<{ id: string; balance: string; entries_sum: string; entries: number }[]>`
    select a.id::text, a.balance::text,
           coalesce((select sum(e.amount) from private.ledger_entries e where e.account_id = a.id), 0)::text as entries_sum,
           (select count(*)::int from private.ledger_entries e where e.account_id = a.id) as entries
      from private.ledger_accounts a where a.kind = 'user_wallet' and a.owner_id = ${userId}`;
  return row;
}

async function reversalsFor(txId: string): Promise<number> {
  const [row] = await testDb()<{ n: number }[]>`
    select count(*)::int as n from private.ledger_transfers where transaction_id = ${txId} and kind = 'payout_reversal'`;
  return row?.n ?? 0;
}

async function withdrawn(user: TestUser, naira: number) {
  const res = await post(walletWithdraw, { amount: naira }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: string; status: string; amount: number };
}

// ---- the happy path ------------------------------------------------------------------------

describe('wallet-withdraw', () => {
  describe('to the default payout account', () => {
    it('debits the balance at once, sends /transfer with our id, kobo and the recipient; transfer.success settles it', async () => {
      const user = await verified();
      await fund(user, 10_000);
      const payout = await addPayout(user);
      const [listed] = (await get(payoutList, { token: user.accessToken })).body.data;
      expect(listed).toMatchObject({ id: payout.id, is_default: true });
      const [recipientCall] = (await paystack.requests('/transferrecipient')).filter((r) =>
        r.body?.account_number === payout.accountNumber
      );
      expect(recipientCall).toBeDefined();

      const res = await post(walletWithdraw, { amount: 2500.5 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: 200 });
      const tx = res.body.data;
      expect(tx).toMatchObject({
        type: 'withdrawal',
        category: 'withdrawal',
        direction: 'out',
        status: 'pending',
        amount: 2500.5,
        currency: 'NGN',
        provider: 'paystack',
        completed_at: null,
      });
      expect(tx.metadata).toMatchObject({
        payout_account_id: payout.id,
        account_last4: payout.accountNumber.slice(-4),
      });
      expect(JSON.stringify(tx)).not.toContain(payout.accountNumber); // never the full number

      expect(await wallet(user)).toMatchObject({ balance: 7499.5, pending_withdrawals: 2500.5 });

      const transfers = (await paystack.requests('/transfer')).filter((r) => r.body?.reference === tx.id);
      expect(transfers).toHaveLength(1);
      expect(transfers[0]?.body).toMatchObject({
        reference: tx.id,
        amount: 250050,
        currency: 'NGN',
        source: 'balance',
      });
      const recipients = await paystack.requests('/transferrecipient');
      // the recipient created for this account at payout-add is the one paid
      const [saved] = await testDb()<{ provider_recipient_code: string }[]>`
      select provider_recipient_code from public.payout_accounts where id = ${payout.id}`;
      expect(saved?.provider_recipient_code).toMatch(/^RCP_/);
      expect(transfers[0]?.body.recipient).toBe(saved?.provider_recipient_code);
      expect(recipients.filter((r) => r.body?.account_number === payout.accountNumber)).toHaveLength(1); // not re-created
      expect((await txRow(tx.id))?.provider_transfer_id).toMatch(/^TRF_/);

      const done = await paystack.transferOutcome(tx.id, 'transfer.success', { times: 2 });
      expect(done.responses.map((r) => r.status)).toEqual([200, 200]);
      expect(done.responses[0]?.body).toEqual({ success: true, status: 200, data: { received: true } });

      const row = await txRow(tx.id);
      expect(row?.status).toBe('succeeded');
      expect(row?.completed_at).not.toBeNull();
      expect(await wallet(user)).toMatchObject({ balance: 7499.5, pending_withdrawals: 0 });
      const list = await get(transactionList, { token: user.accessToken, query: { category: 'withdrawal' } });
      expect(list.body.data.data).toHaveLength(1);
      expect(list.body.data.data[0]).toMatchObject({ id: tx.id, status: 'succeeded', amount: 2500.5 });

      const ledger = await ledgerWallet(user.id);
      expect(ledger?.balance).toBe('749950');
      expect(ledger?.entries_sum).toBe(ledger?.balance);
    });

    it('pays the account named by payout_account_id when given', async () => {
      const user = await verified();
      await fund(user, 5000);
      const first = await addPayout(user);
      const second = await addPayout(user);
      const res = await post(walletWithdraw, { amount: 1000, payout_account_id: second.id }, {
        token: user.accessToken,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.metadata.payout_account_id).toBe(second.id);
      const [call] = (await paystack.requests('/transfer')).filter((r) => r.body?.reference === res.body.data.id);
      const [acct] = await testDb()<{ provider_recipient_code: string }[]>`
      select provider_recipient_code from public.payout_accounts where id = ${second.id}`;
      expect(call?.body.recipient).toBe(acct?.provider_recipient_code);
      expect(first.id).not.toBe(second.id);
    });
  });

  // ---- failures and reversals ----------------------------------------------------------------

  describe('transfer.failed and transfer.reversed put the money back exactly once', () => {
    it('transfer.failed delivered three times, then transfer.reversed and a late transfer.success: restored once', async () => {
      const user = await verified();
      await fund(user, 3000);
      await addPayout(user);
      const tx = await withdrawn(user, 1200);
      expect((await wallet(user)).balance).toBe(1800);

      const failed = await paystack.transferOutcome(tx.id, 'transfer.failed', { times: 3 });
      expect(failed.responses.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(await wallet(user)).toMatchObject({ balance: 3000, pending_withdrawals: 0 });
      const row = await txRow(tx.id);
      expect(row?.status).toBe('failed');
      expect(row?.completed_at).not.toBeNull();
      // the cause, not the transfer's narration (data.reason is the "Wallet withdrawal" we sent)
      expect(row?.metadata).toMatchObject({ failure_reason: 'failed', previous_status: 'pending' });

      const reversed = await paystack.transferOutcome(tx.id, 'transfer.reversed');
      expect(reversed.responses[0]?.status).toBe(200);
      const late = await paystack.transferOutcome(tx.id, 'transfer.success');
      expect(late.responses[0]?.status).toBe(200);

      expect((await wallet(user)).balance).toBe(3000);
      expect((await txRow(tx.id))?.status).toBe('failed'); // not resurrected by the late success
      expect(await reversalsFor(tx.id)).toBe(1);
      const ledger = await ledgerWallet(user.id);
      expect(ledger?.balance).toBe('300000');
      expect(ledger?.entries_sum).toBe('300000');
    });

    it('the same transfer.failed delivered concurrently still restores the money once', async () => {
      const user = await verified();
      await fund(user, 2000);
      await addPayout(user);
      const tx = await withdrawn(user, 2000);
      expect((await wallet(user)).balance).toBe(0);
      const failed = await paystack.transferOutcome(tx.id, 'transfer.failed', { times: 6, concurrent: true });
      expect(failed.responses.every((r) => r.status === 200)).toBe(true);
      expect((await wallet(user)).balance).toBe(2000);
      expect(await reversalsFor(tx.id)).toBe(1);
    });

    it('transfer.reversed after transfer.success returns the money once', async () => {
      const user = await verified();
      await fund(user, 4000);
      await addPayout(user);
      const tx = await withdrawn(user, 4000);
      await paystack.transferOutcome(tx.id, 'transfer.success');
      expect((await txRow(tx.id))?.status).toBe('succeeded');
      expect((await wallet(user)).balance).toBe(0);

      const reversed = await paystack.transferOutcome(tx.id, 'transfer.reversed', { times: 2 });
      expect(reversed.responses.map((r) => r.status)).toEqual([200, 200]);
      const failedToo = await paystack.transferOutcome(tx.id, 'transfer.failed');
      expect(failedToo.responses[0]?.status).toBe(200);

      expect((await wallet(user)).balance).toBe(4000);
      const row = await txRow(tx.id);
      expect(row?.status).toBe('failed');
      expect(row?.metadata).toMatchObject({ failure_reason: 'reversed', previous_status: 'succeeded' });
      expect(await reversalsFor(tx.id)).toBe(1);
      const ledger = await ledgerWallet(user.id);
      expect(ledger?.entries_sum).toBe(ledger?.balance);
    });
  });

  describe('when the provider says no or is down', () => {
    it('a refused /transfer is 502, the transaction is failed and the balance restored', async () => {
      const user = await verified();
      await fund(user, 5000);
      const payout = await addPayout(user);
      await paystack.fail({ path: '/transfer', field: 'account_number', value: payout.accountNumber }, 'refuse');

      const res = await post(walletWithdraw, { amount: 3000 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(502);
      expect(res.body).toMatchObject({ success: false, status: 502, code: 'transfer_refused' });
      expect(typeof res.body.error).toBe('string');

      const txs = await withdrawals(user.id);
      expect(txs).toHaveLength(1);
      expect(txs[0]?.status).toBe('failed');
      expect(await wallet(user)).toMatchObject({ balance: 5000, pending_withdrawals: 0 });
      expect(await reversalsFor(txs[0]!.id)).toBe(1);
      const ledger = await ledgerWallet(user.id);
      expect(ledger?.balance).toBe('500000');
      expect(ledger?.entries_sum).toBe('500000');
    });

    it('an unavailable /transfer leaves a pending withdrawal (200, balance debited); a later transfer.failed restores it', async () => {
      const user = await verified();
      await fund(user, 5000);
      const payout = await addPayout(user);
      await paystack.fail({ path: '/transfer', field: 'account_number', value: payout.accountNumber }, 'unavailable');

      const res = await post(walletWithdraw, { amount: 3000 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'pending', amount: 3000 });
      const txId = res.body.data.id as string;
      expect(await wallet(user)).toMatchObject({ balance: 2000, pending_withdrawals: 3000 });

      // the fake never recorded the transfer, so the outcome is delivered by hand, in Paystack's shape
      const failed = await paystack.deliver('transfer.failed', {
        id: randomInt(1, 1_000_000_000),
        reference: txId,
        amount: 300000,
        currency: 'NGN',
        status: 'failed',
        reason: 'Wallet withdrawal',
        gateway_response: 'Beneficiary bank unavailable',
        transfer_code: `TRF_${randomInt(1, 1e9).toString(36)}`,
      });
      expect(failed.responses[0]?.status).toBe(200);
      const row = await txRow(txId);
      expect(row?.status).toBe('failed');
      expect(row?.metadata).toMatchObject({ failure_reason: 'Beneficiary bank unavailable' });
      expect(await wallet(user)).toMatchObject({ balance: 5000, pending_withdrawals: 0 });
      expect(await reversalsFor(txId)).toBe(1);
    });

    it('when the recipient cannot be created (provider down) no transfer was sent: 503, failed, balance restored', async () => {
      const user = await verified();
      await fund(user, 5000);
      const accountNumber = newAccountNumber();
      // Paystack is down for this account's recipient: payout-add keeps it without a recipient code
      await paystack.fail({ path: '/transferrecipient', field: 'account_number', value: accountNumber }, 'unavailable');
      const payout = await addPayout(user, accountNumber);
      const [acct] = await testDb()<{ provider_recipient_code: string | null }[]>`
      select provider_recipient_code from public.payout_accounts where id = ${payout.id}`;
      expect(acct?.provider_recipient_code).toBeNull();

      const res = await post(walletWithdraw, { amount: 1000 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toMatchObject({ success: false, status: 503, code: 'provider_unavailable' });
      expect(res.headers.get('retry-after')).toBe('5');
      const txs = await withdrawals(user.id);
      expect(txs).toHaveLength(1);
      expect(txs[0]?.status).toBe('failed');
      expect(await wallet(user)).toMatchObject({ balance: 5000, pending_withdrawals: 0 });
      expect((await paystack.requests('/transfer')).filter((r) => r.body?.reference === txs[0]?.id)).toHaveLength(0);
    });
  });

  // ---- refusals before any money moves -------------------------------------------------------

  describe('refusals', () => {
    it('insufficient balance is 409 with details on amount, and leaves no transaction behind', async () => {
      const user = await verified();
      await fund(user, 1000);
      await addPayout(user);
      const res = await post(walletWithdraw, { amount: 1000.01 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toEqual({
        success: false,
        status: 409,
        code: 'insufficient_funds',
        error: 'Insufficient funds',
        details: [{ field: 'amount', message: 'is more than the available balance' }],
      });
      expect(await withdrawals(user.id)).toHaveLength(0);
      expect(await wallet(user)).toMatchObject({ balance: 1000, pending_withdrawals: 0 });
      // nothing was sent to the provider for this user
      const [acct] = await testDb()<{ provider_recipient_code: string }[]>`
      select provider_recipient_code from public.payout_accounts where user_id = ${user.id}`;
      expect((await paystack.requests('/transfer')).filter((r) => r.body?.recipient === acct?.provider_recipient_code))
        .toHaveLength(0);
    });

    it('an empty wallet is 409 too', async () => {
      const user = await verified();
      await addPayout(user);
      const res = await post(walletWithdraw, { amount: 100 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toMatchObject({ code: 'insufficient_funds' });
      expect(fieldsOf(res)).toEqual(['amount']);
      expect(await withdrawals(user.id)).toHaveLength(0);
    });

    it('no payout account at all is 409 payout_account_required naming payout_account_id', async () => {
      const user = await verified();
      await fund(user, 1000);
      const res = await post(walletWithdraw, { amount: 500 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toMatchObject({ success: false, status: 409, code: 'payout_account_required' });
      expect(fieldsOf(res)).toEqual(['payout_account_id']);
      expect(await withdrawals(user.id)).toHaveLength(0);
      expect((await wallet(user)).balance).toBe(1000);
    });

    it("someone else's payout account is 404 and nothing moves", async () => {
      const owner = await signUp(); // saving a payout account is allowed at tier 0
      const other = await addPayout(owner);
      const user = await verified();
      await fund(user, 1000);
      await addPayout(user);
      const res = await post(walletWithdraw, { amount: 500, payout_account_id: other.id }, {
        token: user.accessToken,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body).toMatchObject({ success: false, status: 404, code: 'payout_account_not_found' });
      expect(fieldsOf(res)).toEqual(['payout_account_id']);
      expect(await withdrawals(user.id)).toHaveLength(0);
      expect((await wallet(user)).balance).toBe(1000);
      const unknown = await post(walletWithdraw, { amount: 500, payout_account_id: randomUUID() }, {
        token: user.accessToken,
      });
      expect(unknown.status).toBe(404);
    });

    it('validates the body (amount bounds and decimals, uuid, unknown fields) and needs a token', async () => {
      const user = await signUp();
      for (const amount of [0, -1, 99.99, 100.001, 100_000_000.01, '500']) {
        // @ts-expect-error amounts the schema refuses, a string among them
        const res = await post(walletWithdraw, { amount }, { token: user.accessToken });
        expect(res.status, `${amount}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(new Set(fieldsOf(res))).toEqual(new Set(['amount']));
      }
      const badId = await post(walletWithdraw, { amount: 500, payout_account_id: 'nope' }, {
        token: user.accessToken,
      });
      expect(fieldsOf(badId)).toEqual(['payout_account_id']);
      // @ts-expect-error an unknown field, on purpose
      const extra = await post(walletWithdraw, { amount: 500, to: 'x' }, { token: user.accessToken });
      expect(fieldsOf(extra)).toEqual(['to']);
      expect((await post(walletWithdraw, { amount: 500 })).status).toBe(401);
    });
  });

  // ---- concurrency ---------------------------------------------------------------------------

  describe('concurrent withdrawals from one wallet', () => {
    it('50 x NGN 500 against NGN 10,000: exactly 20 succeed, 30 are 409, the wallet ends at 0 and the ledger balances', async () => {
      const user = await verified();
      await fund(user, 10_000);
      await addPayout(user);

      const results = await Promise.all(
        Array.from({ length: 50 }, () => post(walletWithdraw, { amount: 500 }, { token: user.accessToken })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.filter((s) => s === 409)).toHaveLength(30);
      for (const r of results.filter((x) => x.status === 409)) expect(fieldsOf(r)).toEqual(['amount']);

      expect(await wallet(user)).toMatchObject({ balance: 0, pending_withdrawals: 10_000 });
      const txs = await withdrawals(user.id);
      expect(txs).toHaveLength(20);
      expect(new Set(txs.map((t) => t.id))).toEqual(
        new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.id)),
      );
      expect(txs.every((t) => t.status === 'pending')).toBe(true);
      const sent = (await paystack.requests('/transfer')).filter((r) => txs.some((t) => t.id === r.body?.reference));
      expect(sent).toHaveLength(20);

      const ledger = await ledgerWallet(user.id);
      expect(ledger?.balance).toBe('0');
      expect(ledger?.entries_sum).toBe('0');
      expect(ledger?.entries).toBe(21); // one top-up + 20 withdrawals
      // never negative: the running balance in posting order stays >= 0 throughout
      const [low] = await testDb()<{ min: string }[]>`
      select min(running)::text as min from (
        select sum(amount) over (order by id) as running from private.ledger_entries where account_id = ${
        ledger!.id
      }) r`;
      expect(Number(low?.min)).toBeGreaterThanOrEqual(0);

      // the books as a whole: every account equals the sum of its entries, and everything sums to zero
      const [books] = await testDb()<{ mismatched: number; total: string }[]>`
      select (select count(*)::int from private.ledger_accounts a
               where a.balance <> coalesce((select sum(e.amount) from private.ledger_entries e where e.account_id = a.id), 0)) as mismatched,
             (select coalesce(sum(balance), 0)::text from private.ledger_accounts) as total`;
      expect(books).toEqual({ mismatched: 0, total: '0' });

      // settling them all: ten succeed, ten fail; exactly the failed ones come back
      const ids = txs.map((t) => t.id);
      await Promise.all(ids.slice(0, 10).map((id) => paystack.transferOutcome(id, 'transfer.success')));
      await Promise.all(
        ids.slice(10).map((id) => paystack.transferOutcome(id, 'transfer.failed', { times: 2, concurrent: true })),
      );
      expect(await wallet(user)).toMatchObject({ balance: 5000, pending_withdrawals: 0 });
      const after = await ledgerWallet(user.id);
      expect(after?.balance).toBe('500000');
      expect(after?.entries_sum).toBe('500000');
    });
  });
});
