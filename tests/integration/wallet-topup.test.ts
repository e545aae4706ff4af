import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { fieldsOf, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

/**
 * A new user at tier 1: below it (tier 0, phone only) wallet-topup and card-add are refused by the
 * identity floor (tests/integration/kyc-floor.test.ts), and tier 1 allows NGN 50,000 at once.
 */
const verified = () => signUp({ tier: 1 });

const txRow = async (id: string) => {
  const [row] = await testDb()<
    { status: string; amount: string; metadata: Record<string, unknown>; completed_at: Date | null }[]
  >`
    select status, amount::text as amount, metadata, completed_at from public.transactions where id = ${id}`;
  return row;
};

const balanceOf = async (token: string): Promise<number> => {
  const w = await get(walletGet, { token });
  expect(w.status, JSON.stringify(w.body)).toBe(200);
  return w.body.data.balance;
};

const userTransactions = async (userId: string) =>
  testDb()<{ id: string; status: string; type: string }[]>`
    select id, status, type from public.transactions where user_id = ${userId} order by created_at`;

let cardSeq = 0;
/** Saves a card whose authorization the Paystack fake issued to the user (a card they paid with). */
async function addCard(user: TestUser, authorization_code: string) {
  const token = user.accessToken;
  await paystack.authorizeUser(user.id, authorization_code);
  const res = await post(
    cardAdd,
    {
      authorization_code,
      last4: '4081',
      brand: 'visa',
      exp_month: '12',
      exp_year: '2030',
      bank: 'TEST BANK',
      signature: `SIG_${Date.now()}_${++cardSeq}_${Math.random().toString(36).slice(2)}`,
    },
    { token },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data).not.toHaveProperty('authorization_code');
  return res.body.data.id as string;
}

describe('wallet-topup', () => {
  describe('with a new card, completed by charge.success', () => {
    it('initialises the charge with our transaction id as reference and credits the wallet once', async () => {
      const user = await verified();
      const res = await post(walletTopup, { amount: 2500.75 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const { reference, transaction_id, authorization_url, amount, status } = res.body.data;
      expect(reference).toBe(transaction_id);
      expect(amount).toBe(2500.75);
      expect(status).toBe('pending');
      expect(authorization_url).toMatch(/^https:\/\//);

      const [init] = (await paystack.requests('/transaction/initialize')).filter((r) =>
        r.body?.reference === reference
      );
      expect(init?.body.amount).toBe('250075');
      expect(init?.body.email).toBe(`${user.id}@customers.escrow.ng`);

      let wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data).toMatchObject({ balance: 0, pending_deposits: 2500.75, currency: 'NGN' });

      const delivered = await paystack.chargeSuccess(reference, { times: 3 });
      expect(delivered.responses.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(delivered.responses[0]?.body).toEqual({ success: true, status: 200, data: { received: true } });

      wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data).toMatchObject({ balance: 2500.75, pending_deposits: 0 });
      const list = await get(transactionList, { token: user.accessToken });
      expect(list.body.data.data).toHaveLength(1);
      expect(list.body.data.data[0]).toMatchObject({
        id: reference,
        status: 'succeeded',
        category: 'deposit',
        direction: 'in',
        amount: 2500.75,
      });
      const [entries] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.ledger_transfers where transaction_id = ${reference}`;
      expect(entries?.n).toBe(1);
    });
  });

  // ---- saved cards ---------------------------------------------------------------------------

  describe('with a saved card', () => {
    it('charges the saved authorization with our transaction id as reference and stays pending until charge.success', async () => {
      const user = await verified();
      const code = `AUTH_ok${Date.now()}${Math.random().toString(36).slice(2, 8)}`;
      const cardId = await addCard(user, code);

      const res = await post(walletTopup, { amount: 1500, card_id: cardId }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: 200 });
      const { reference, transaction_id, authorization_url, status, amount } = res.body.data;
      expect(reference).toBe(transaction_id);
      expect(status).toBe('pending');
      expect(amount).toBe(1500);
      expect(authorization_url).toBeNull();

      const calls = (await paystack.requests('/transaction/charge_authorization')).filter((r) =>
        r.body?.reference === reference
      );
      expect(calls).toHaveLength(1);
      expect(calls[0]?.body).toMatchObject({
        authorization_code: code,
        reference,
        email: `${user.id}@customers.escrow.ng`,
      });
      expect(Number(calls[0]?.body.amount)).toBe(150000);
      // a saved-card charge never goes through the hosted checkout
      expect((await paystack.requests('/transaction/initialize')).filter((r) => r.body?.reference === reference))
        .toHaveLength(0);

      // the synchronous "success" of charge_authorization does not complete it: only the webhook does
      expect((await txRow(reference))?.status).toBe('pending');
      expect((await txRow(reference))?.metadata).toMatchObject({ card_id: cardId });
      let wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data).toMatchObject({ balance: 0, pending_deposits: 1500 });

      const delivered = await paystack.chargeSuccess(reference);
      expect(delivered.responses[0]?.status).toBe(200);
      wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data).toMatchObject({ balance: 1500, pending_deposits: 0 });
      expect((await txRow(reference))?.status).toBe('succeeded');
    });

    it('a declined saved card answers 402 and leaves the transaction failed, nothing credited', async () => {
      const user = await verified();
      const cardId = await addCard(user, `AUTH_decline${Date.now()}`);

      const res = await post(walletTopup, { amount: 1000, card_id: cardId }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(402);
      expect(res.body).toMatchObject({ success: false, status: 402, code: 'card_declined' });
      expect(res.body.error).toMatch(/^The card was declined: /);

      const txs = await userTransactions(user.id);
      expect(txs).toHaveLength(1);
      expect(txs[0]).toMatchObject({ status: 'failed', type: 'wallet_topup' });
      const row = await txRow(txs[0]!.id);
      expect(row?.completed_at).not.toBeNull();
      expect(row?.metadata).toHaveProperty('failure_reason');
      expect(await balanceOf(user.accessToken)).toBe(0);
      const wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data.pending_deposits).toBe(0);
    });

    it('an unknown card_id is 404 and creates no transaction', async () => {
      const user = await verified();
      const res = await post(walletTopup, { amount: 1000, card_id: randomUUID() }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body).toMatchObject({
        success: false,
        status: 404,
        code: 'card_not_found',
        error: 'Card not found',
        details: [{ field: 'card_id', message: 'is not one of your saved cards' }],
      });
      expect(await userTransactions(user.id)).toHaveLength(0);
    });

    it("another user's card is 404 (never charged)", async () => {
      const owner = await verified();
      const cardId = await addCard(owner, `AUTH_ok_other${Date.now()}`);
      const thief = await verified();
      const res = await post(walletTopup, { amount: 1000, card_id: cardId }, { token: thief.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(await userTransactions(thief.id)).toHaveLength(0);
      const calls = (await paystack.requests('/transaction/charge_authorization')).filter((r) =>
        r.body?.email === `${thief.id}@customers.escrow.ng`
      );
      expect(calls).toHaveLength(0);
    });
  });

  // ---- provider failures ---------------------------------------------------------------------

  describe('when the provider says no or is down', () => {
    it('a refusal from /transaction/initialize is 402 and the transaction is failed', async () => {
      const user = await verified();
      await paystack.fail(
        { path: '/transaction/initialize', field: 'email', value: `${user.id}@customers.escrow.ng` },
        'refuse',
      );
      const res = await post(walletTopup, { amount: 1000 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(402);
      expect(res.body).toMatchObject({ success: false, status: 402, code: 'charge_refused' });
      expect(res.body.error).toMatch(/^The payment provider refused the charge: /);
      const txs = await userTransactions(user.id);
      expect(txs).toHaveLength(1);
      expect(txs[0]?.status).toBe('failed');
      expect(await balanceOf(user.accessToken)).toBe(0);
    });

    it('an unavailable provider is 503, the transaction is failed and nothing is credited', async () => {
      const user = await verified();
      await paystack.fail(
        { path: '/transaction/initialize', field: 'email', value: `${user.id}@customers.escrow.ng` },
        'unavailable',
      );
      const res = await post(walletTopup, { amount: 1000 }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toMatchObject({
        success: false,
        status: 503,
        code: 'provider_unavailable',
        error: 'The payment provider is unavailable; nothing was charged, try again shortly',
      });
      expect(res.headers.get('retry-after')).toBe('5');
      const txs = await userTransactions(user.id);
      expect(txs).toHaveLength(1);
      expect(txs[0]?.status).toBe('failed');
      const wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data).toMatchObject({ balance: 0, pending_deposits: 0 });
      const [transfers] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.ledger_transfers where transaction_id = ${txs[0]!.id}`;
      expect(transfers?.n).toBe(0);
    });
  });

  // ---- amounts -------------------------------------------------------------------------------

  describe('validation', () => {
    const bad: [string, unknown][] = [
      ['zero', 0],
      ['negative', -500],
      ['three decimals', 1000.123],
      ['below NGN 100', 99.99],
      ['above NGN 100,000,000', 100_000_000.01],
      ['a string', '1000'],
      ['null', null],
      ['not finite (huge)', 1e308],
    ];
    it.each(bad)('rejects an amount that is %s with 400 naming amount, creating nothing', async (_label, amount) => {
      const user = await signUp();
      // @ts-expect-error amounts of every wrong kind, on purpose
      const res = await post(walletTopup, { amount }, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ success: false, status: 400 });
      expect(fieldsOf(res).length).toBeGreaterThan(0);
      expect(new Set(fieldsOf(res))).toEqual(new Set(['amount']));
      expect(await userTransactions(user.id)).toHaveLength(0);
    });

    it('accepts the bounds NGN 100 and NGN 100,000,000; above NGN 50,000,000 the KYC limits refuse what it accepts', async () => {
      const user = await verified();
      const low = await post(walletTopup, { amount: 100 }, { token: user.accessToken });
      expect(low.status, JSON.stringify(low.body)).toBe(200);
      // NGN 50,000,000 is the most any tier allows at once (tier 4's single limit)
      const business = await signUp({ tier: 4 });
      const high = await post(walletTopup, { amount: 50_000_000 }, { token: business.accessToken });
      expect(high.status, JSON.stringify(high.body)).toBe(200);
      const [init] = (await paystack.requests('/transaction/initialize')).filter((r) =>
        r.body?.reference === high.body.data.reference
      );
      expect(Number(init?.body.amount)).toBe(5_000_000_000);
      // the schema's upper bound still passes validation (not 400): no tier allows it (403)
      const top = await post(walletTopup, { amount: 100_000_000 }, { token: business.accessToken });
      expect(top.status, JSON.stringify(top.body)).toBe(403);
    });

    it('rejects a missing amount and unknown fields', async () => {
      const user = await signUp();
      // @ts-expect-error a misspelt field, on purpose
      const res = await post(walletTopup, { amout: 1000 }, { token: user.accessToken });
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toEqual(['amount', 'amout']);
    });

    it('needs a bearer token (401)', async () => {
      const res = await post(walletTopup, { amount: 1000 });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false, status: 401 });
      const bad = await post(walletTopup, { amount: 1000 }, { token: 'not-a-jwt' });
      expect(bad.status).toBe(401);
    });
  });

  // ---- charge.success for another amount -----------------------------------------------------

  describe('charge.success with an amount other than the pending one', () => {
    it('credits nothing when Paystack confirms that other amount: the top-up stays pending, flagged for review', async () => {
      const user = await verified();
      const res = await post(walletTopup, { amount: 5000 }, { token: user.accessToken });
      expect(res.status).toBe(200);
      const reference = res.body.data.reference as string;

      await paystack.chargeStatus(reference, 'success', 300_000); // Paystack says NGN 3,000 arrived
      const delivered = await paystack.chargeSuccess(reference, { amount: 300_000 });
      expect(delivered.responses[0]?.status).toBe(200);
      expect(delivered.responses[0]?.body).toEqual({ success: true, status: 200, data: { received: true } });

      expect(await balanceOf(user.accessToken)).toBe(0);
      const row = await txRow(reference);
      expect(row?.status).toBe('pending');
      expect(row?.amount).toBe('500000');
      expect(row?.metadata.review).toMatchObject({
        reason: 'amount_mismatch',
        expected_amount: 500000,
        received_amount: 300000,
        provider_status: 'success',
      });

      const flags = await testDb()<{ reason: string; expected_amount: string; received_amount: string }[]>`
      select reason, expected_amount::text, received_amount::text from private.payment_flags where transaction_id = ${reference}`;
      expect(flags).toEqual([{ reason: 'amount_mismatch', expected_amount: '500000', received_amount: '300000' }]);

      // a redelivery changes nothing
      await paystack.chargeSuccess(reference, { amount: 300_000 });
      expect(await balanceOf(user.accessToken)).toBe(0);
      const [sum] = await testDb()<{ total: string }[]>`
      select coalesce(sum(e.amount), 0)::text as total
        from private.ledger_entries e join private.ledger_accounts a on a.id = e.account_id
       where a.kind = 'user_wallet' and a.owner_id = ${user.id}`;
      expect(sum?.total).toBe('0');
    });

    it('an event claiming more than Paystack charged credits only the verified, expected amount (and is flagged)', async () => {
      const user = await verified();
      const res = await post(walletTopup, { amount: 1000 }, { token: user.accessToken });
      const reference = res.body.data.reference as string;
      // Paystack charged the NGN 1,000 asked for; the event says NGN 1,500.50
      await paystack.chargeSuccess(reference, { amount: 150_050 });
      expect(await balanceOf(user.accessToken)).toBe(1000);
      expect((await txRow(reference))?.status).toBe('succeeded');
      const [flag] = await testDb()<{ expected_amount: string; received_amount: string }[]>`
      select expected_amount::text, received_amount::text from private.payment_flags where transaction_id = ${reference}`;
      expect(flag).toEqual({ expected_amount: '100000', received_amount: '150050' });
    });
  });

  describe('charge.success for a top-up that already failed', () => {
    it('is neither credited nor silently dropped: the money that arrived is flagged for an operator', async () => {
      const user = await verified();
      const cardId = await addCard(user, `AUTH_decline_late${Date.now()}`);
      const res = await post(walletTopup, { amount: 2000, card_id: cardId }, { token: user.accessToken });
      expect(res.status).toBe(402);
      const [tx] = await userTransactions(user.id);
      expect(tx?.status).toBe('failed');

      // the provider later reports the charge as successful after all
      const delivered = await paystack.chargeSuccess(tx!.id);
      expect(delivered.responses[0]?.status).toBe(200);
      expect(await balanceOf(user.accessToken)).toBe(0);
      expect((await txRow(tx!.id))?.status).toBe('failed');
      const flags = await testDb()<{ reason: string; expected_amount: string; received_amount: string }[]>`
      select reason, expected_amount::text, received_amount::text from private.payment_flags where transaction_id = ${
        tx!.id
      }`;
      expect(flags).toEqual([{
        reason: 'charge_for_closed_transaction',
        expected_amount: '200000',
        received_amount: '200000',
      }]);
      // a redelivery does not flag it twice
      await paystack.chargeSuccess(tx!.id);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from private.payment_flags where transaction_id = ${tx!.id}`;
      expect(n?.n).toBe(1);
    });
  });
});
