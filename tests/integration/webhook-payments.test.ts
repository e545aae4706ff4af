// webhook-payments: signatures checked on the raw bytes before anything is parsed or recorded,
// every valid event answered 200 {received: true}, each event taking effect exactly once.
// The users whose top-ups, withdrawals and virtual accounts the events are about are at tier 1: at
// tier 0 (phone only) the identity floor refuses all three (tests/integration/kyc-floor.test.ts).
import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, get, post, postRaw } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { TEST_PAYMENTS_WEBHOOK_SECRET } from '../support/stack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';
import webhookPayments from '../../supabase/functions/webhook-payments/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const sign = (body: string, secret = TEST_PAYMENTS_WEBHOOK_SECRET) =>
  createHmac('sha512', secret).update(body).digest('hex');

/** Posts raw bytes to webhook-payments with the given headers (no bearer: providers have none). */
const sendRaw = (body: string, headers: Record<string, string> = {}) =>
  postRaw(webhookPayments, body, { headers: { 'Content-Type': 'application/json', ...headers } });

const sendSigned = (body: string, header = 'x-payments-signature') => sendRaw(body, { [header]: sign(body) });

/** A new user at tier 1, the lowest tier that may top up, withdraw and get a virtual account. */
const verified = () => signUp({ tier: 1 });

const RECEIVED = { success: true, status: 200, data: { received: true } };

/** A charge.success body in Paystack's shape. */
function chargeEvent(reference: string, amount: number, id = randomInt(1, 2 ** 40)) {
  return JSON.stringify({
    event: 'charge.success',
    data: {
      id,
      domain: 'test',
      status: 'success',
      reference,
      amount,
      currency: 'NGN',
      channel: 'card',
      gateway_response: 'Successful',
      paid_at: new Date().toISOString(),
      customer: { id: 1, email: 'someone@example.com', customer_code: 'CUS_x' },
    },
  });
}

async function inboxRows(reference: string) {
  return testDb()<{ event_key: string; event_type: string; outcome: string }[]>`
    select event_key, event_type, outcome from private.webhook_inbox where payload -> 'data' ->> 'reference' = ${reference}`;
}

async function flagsFor(reference: string) {
  return testDb()<
    { reason: string; transaction_id: string | null; expected_amount: string | null; received_amount: string | null }[]
  >`
    select reason, transaction_id, expected_amount::text, received_amount::text
      from private.payment_flags where provider_reference = ${reference} order by id`;
}

async function pendingTopup(user: TestUser, naira: number): Promise<string> {
  const res = await post(walletTopup, { amount: naira }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.reference;
}

const balanceOf = async (user: TestUser) =>
  (await get(walletGet, { token: user.accessToken })).body.data.balance as number;

// ---- signatures ----------------------------------------------------------------------------

describe('webhook-payments', () => {
  describe('signature', () => {
    it('a missing signature is 401 and nothing is recorded or credited', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 1000);
      const res = await sendRaw(chargeEvent(reference, 100000));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false, status: 401 });
      expect(typeof res.body.error).toBe('string');
      expect(await inboxRows(reference)).toHaveLength(0);
      expect(await balanceOf(user)).toBe(0);
      const [tx] = await testDb()<
        { status: string }[]
      >`select status::text from public.transactions where id = ${reference}`;
      expect(tx?.status).toBe('pending');
    });

    it('a tampered body with the original signature is 401', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 1000);
      const original = chargeEvent(reference, 100000, 777001);
      const tampered = original.replace('"amount":100000', '"amount":999999900');
      expect(tampered).not.toBe(original);
      const res = await sendRaw(tampered, { 'x-payments-signature': sign(original) });
      expect(res.status).toBe(401);
      // even one extra byte of whitespace breaks it: the signature covers the raw bytes
      const spaced = await sendRaw(`${original} `, { 'x-payments-signature': sign(original) });
      expect(spaced.status).toBe(401);
      expect(await inboxRows(reference)).toHaveLength(0);
      expect(await balanceOf(user)).toBe(0);
    });

    it('a signature made with another secret is 401, and so is garbage in the header', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 1000);
      const body = chargeEvent(reference, 100000);
      for (const signature of [sign(body, 'not-the-secret'), 'abc', sign(body).slice(0, 64), `${sign(body)}00`, '']) {
        const res = await sendRaw(body, { 'x-payments-signature': signature });
        expect(res.status, signature).toBe(401);
      }
      // upper-case hex of the right digest is the same signature
      const upper = await sendRaw(body, { 'x-payments-signature': sign(body).toUpperCase() });
      expect(upper.status).toBe(200);
      expect(await balanceOf(user)).toBe(1000);
    });

    it('the fake delivering with a wrong signature is refused like any other', async () => {
      const reference = randomUUID();
      const out = await paystack.deliver('charge.success', {
        id: randomInt(1, 1e9),
        reference,
        amount: 5000,
        status: 'success',
      }, { signature: sign('x') });
      expect(out.responses[0]?.status).toBe(401);
      expect(await inboxRows(reference)).toHaveLength(0);
      expect(await flagsFor(reference)).toHaveLength(0);
    });

    it("accepts Paystack's own header, x-paystack-signature, signed with the shared secret", async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 1234.5);
      const body = chargeEvent(reference, 123450);
      const res = await sendSigned(body, 'x-paystack-signature');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual(RECEIVED);
      expect(await balanceOf(user)).toBe(1234.5);
      const [tx] = await testDb()<
        { status: string }[]
      >`select status::text from public.transactions where id = ${reference}`;
      expect(tx?.status).toBe('succeeded');
    });

    it('only POST is accepted (405 with Allow), and preflight answers', async () => {
      const res = await call(webhookPayments, { method: 'GET' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toContain('POST');
      const pre = await call(webhookPayments, { method: 'OPTIONS' });
      expect(pre.status).toBe(204);
    });
  });

  // ---- bodies --------------------------------------------------------------------------------

  describe('bodies', () => {
    it('malformed JSON with a valid signature is 400', async () => {
      const body = '{"event": "charge.success", "data": {';
      const res = await sendSigned(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, status: 400 });
    });

    it('a signed body that is not an event (no event name, data not an object) is 400', async () => {
      for (const body of ['{"data": {}}', '{"event": "charge.success", "data": 5}', '[]', '"hello"']) {
        const res = await sendSigned(body);
        expect(res.status, body).toBe(400);
      }
    });

    it('a valid event of a type we do not handle is answered 200 {received: true} and ignored', async () => {
      const reference = `ref_${randomUUID()}`;
      const body = JSON.stringify({
        event: 'subscription.create',
        data: { id: randomInt(1, 1e9), reference, amount: 500000 },
      });
      const res = await sendSigned(body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(RECEIVED);
      const rows = await inboxRows(reference);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ event_type: 'subscription.create', outcome: 'ignored' });
      expect(await flagsFor(reference)).toHaveLength(0);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from public.transactions where provider_charge_id = ${reference}`;
      expect(n?.n).toBe(0);
    });

    it('charge.success for a reference that is no transaction is flagged for review and still answered 200', async () => {
      const reference = randomUUID();
      const body = chargeEvent(reference, 250000);
      const res = await sendSigned(body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(RECEIVED);
      const flags = await flagsFor(reference);
      expect(flags).toEqual([{
        reason: 'unknown_reference',
        transaction_id: null,
        expected_amount: null,
        received_amount: '250000',
      }]);
      expect((await inboxRows(reference))[0]?.outcome).toBe('flagged:unknown_reference');
      // a redelivery is a duplicate: no second flag
      expect((await sendSigned(body)).status).toBe(200);
      expect(await flagsFor(reference)).toHaveLength(1);
    });

    it('charge.success with a reference that is not ours at all (not a UUID) is flagged too', async () => {
      const reference = `T${randomInt(1, 1e9)}xyz`;
      const res = await sendSigned(chargeEvent(reference, 10000));
      expect(res.status).toBe(200);
      expect((await flagsFor(reference)).map((f) => f.reason)).toEqual(['unknown_reference']);
    });

    it('charge.success for a withdrawal id is not a top-up: flagged, nothing credited', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 2000);
      await paystack.chargeSuccess(reference);
      const acct = `0${String(randomInt(0, 1e9)).padStart(9, '0')}`;
      await paystack.registerAccount('058', acct, 'ADA OBI');
      const pa = await post(payoutAdd, {
        bank_code: '058',
        bank_name: 'GTB',
        account_number: acct,
        account_name: 'Ada Obi',
      }, { token: user.accessToken });
      expect(pa.status).toBe(201);
      const w = await post(walletWithdraw, { amount: 2000 }, { token: user.accessToken });
      expect(w.status).toBe(200);
      const res = await sendSigned(chargeEvent(w.body.data.id, 200000));
      expect(res.status).toBe(200);
      expect((await flagsFor(w.body.data.id)).map((f) => f.reason)).toEqual(['unknown_reference']);
      expect(await balanceOf(user)).toBe(0);
    });

    it('an invalid amount in charge.success is flagged and credits nothing', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 1000);
      // integers past 2^53 (no exact kobo; 1e21 was a bigint Postgres refused: a failure, not a flag)
      const huge = [1e21, '9007199254740993'];
      for (const amount of [0, -100000, 100000.5, 'lots', ...huge]) {
        const res = await sendSigned(
          JSON.stringify({
            event: 'charge.success',
            data: { id: randomInt(1, 1e12), reference, amount, status: 'success' },
          }),
        );
        expect(res.status).toBe(200);
      }
      expect((await flagsFor(reference)).map((f) => f.reason)).toEqual(Array(6).fill('invalid_amount'));
      const [failed] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.webhook_failures where payload -> 'data' ->> 'reference' = ${reference}`;
      expect(failed?.n).toBe(0);
      expect(await balanceOf(user)).toBe(0);
      const [tx] = await testDb()<
        { status: string }[]
      >`select status::text from public.transactions where id = ${reference}`;
      expect(tx?.status).toBe('pending');
    });

    it('transfer events for an unknown reference are flagged and answered 200', async () => {
      const reference = randomUUID();
      const res = await sendSigned(
        JSON.stringify({
          event: 'transfer.failed',
          data: { id: randomInt(1, 1e9), reference, amount: 1000, status: 'failed' },
        }),
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual(RECEIVED);
      expect((await flagsFor(reference)).map((f) => f.reason)).toEqual(['unknown_transfer_reference']);
    });
  });

  // ---- exactly once --------------------------------------------------------------------------

  describe('takes effect once', () => {
    it('the same charge.success delivered 10 times concurrently: all 200, one credit, one inbox row', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 7777.77);
      const out = await paystack.chargeSuccess(reference, { times: 10, concurrent: true });
      expect(out.responses).toHaveLength(10);
      expect(out.responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      for (const r of out.responses) expect(r.body).toEqual(RECEIVED);

      expect(await balanceOf(user)).toBe(7777.77);
      const rows = await inboxRows(reference);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ event_type: 'charge.success', outcome: 'topup:succeeded' });
      const [t] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from private.ledger_transfers where transaction_id = ${reference}`;
      expect(t?.n).toBe(1);
      const [failures] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_failures where payload -> 'data' ->> 'reference' = ${reference}`;
      expect(failures?.n).toBe(0);
    });

    it('a second, different charge.success for an already completed top-up changes nothing', async () => {
      const user = await verified();
      const reference = await pendingTopup(user, 1000);
      expect((await sendSigned(chargeEvent(reference, 100000, 9_000_001))).status).toBe(200);
      // another event id for the same reference (Paystack never does this for one charge, but a replay might)
      expect((await sendSigned(chargeEvent(reference, 100000, 9_000_002))).status).toBe(200);
      expect(await balanceOf(user)).toBe(1000);
      const rows = await inboxRows(reference);
      expect(rows.map((r) => r.outcome).sort()).toEqual(['topup:already_done', 'topup:succeeded']);
    });

    it('a failing effect rolls back, is kept in webhook_failures, still answers 200, and a redelivery is processed afresh', async () => {
      // Two users; the second is told (wrongly) that it got the first one's account number: the
      // unique account number makes that effect fail inside the transaction.
      const a = await verified();
      const b = await verified();
      for (const u of [a, b]) {
        expect((await post(virtualAccountCreate, {}, { token: u.accessToken })).status).toBe(200);
      }
      const assigned = await paystack.assignOutcome(`${a.id}@customers.escrow.ng`, true);
      expect(assigned.responses[0]?.status).toBe(200);
      const number = (await get(virtualAccountGet, { token: a.accessToken })).body.data.account_number as string;

      const clash = JSON.stringify({
        event: 'dedicatedaccount.assign.success',
        data: {
          customer: { email: `${b.id}@customers.escrow.ng`, customer_code: `CUS_clash${randomInt(1, 1e9)}` },
          dedicated_account: {
            id: randomInt(1, 1e9),
            account_number: number,
            account_name: 'X',
            bank: { name: 'Test Bank' },
          },
        },
      });
      const res = await sendSigned(clash);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(RECEIVED);
      const [failure] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_failures where event_type = 'dedicatedaccount.assign.success'
         and payload -> 'data' -> 'customer' ->> 'email' = ${`${b.id}@customers.escrow.ng`}`;
      expect(failure?.n).toBe(1);
      const [inbox] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_inbox where payload -> 'data' -> 'customer' ->> 'email' = ${`${b.id}@customers.escrow.ng`}`;
      expect(inbox?.n).toBe(0); // rolled back with the effect, so a redelivery is not taken for a duplicate
      expect((await get(virtualAccountGet, { token: b.accessToken })).body.data.status).toBe('pending');

      const again = await sendSigned(clash);
      expect(again.status).toBe(200);
      const [failures] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_failures where payload -> 'data' -> 'customer' ->> 'email' = ${`${b.id}@customers.escrow.ng`}`;
      expect(failures?.n).toBe(2);
    });

    it('a bank transfer whose credit fails leaves nothing, is kept in webhook_failures, answers 200, and a redelivery credits it', async () => {
      const user = await verified();
      const account = `66${String(randomInt(0, 1e8)).padStart(8, '0')}`;
      await testDb()`insert into public.virtual_accounts (user_id, status, account_number, provider)
                     values (${user.id}, 'active', ${account}, 'paystack')`;
      const id = randomInt(1, 2 ** 40);
      const reference = `dva-${randomUUID()}`;
      const body = JSON.stringify({
        event: 'charge.success',
        data: {
          id,
          status: 'success',
          reference,
          amount: 250_000,
          currency: 'NGN',
          channel: 'dedicated_nuban',
          authorization: { receiver_bank_account_number: account, sender_name: 'ADA OBI' },
        },
      });
      // the credit's own insert refused for this one charge, inside the webhook's transaction
      const constraint = `fail_charge_${id}`;
      await testDb().unsafe(`alter table public.transactions add constraint ${constraint}
                               check (provider_charge_id is distinct from '${id}') not valid`);
      try {
        const res = await sendSigned(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(RECEIVED);
      } finally {
        await testDb().unsafe(`alter table public.transactions drop constraint ${constraint}`);
      }
      const failures = await testDb()<{ error: string }[]>`
        select error from private.webhook_failures where payload -> 'data' ->> 'reference' = ${reference}`;
      expect(failures).toHaveLength(1);
      expect(failures[0]?.error).toContain(constraint);
      expect(await inboxRows(reference)).toEqual([]); // rolled back with the credit: a redelivery is not a duplicate
      expect(await balanceOf(user)).toBe(0);

      expect((await sendSigned(body)).status).toBe(200);
      expect(await balanceOf(user)).toBe(2500);
      expect((await inboxRows(reference)).map((r) => r.outcome)).toEqual(['virtual_account_deposit']);
    });
  });
});
