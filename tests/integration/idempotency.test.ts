// Idempotency-Key on the POSTs that move money or create resources: the same key with the same
// body replays the first answer byte for byte (Idempotent-Replayed: true) with no second effect;
// another body is 409; a key whose first request is still running is 409; keys are per user and
// operation and live 24 hours. Users who top up, withdraw or save a card are at tier 1: tier 0
// moves no money (the identity floor, tests/integration/kyc-floor.test.ts).
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { baseUrl, type BodyOf, type DataOf, type Endpoint, type Envelope, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { checkSuccessBody } from '../support/responses.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import escrowAccept from '../../supabase/functions/escrow-accept/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

interface RawResult<D = unknown> {
  status: number;
  replayed: string | null;
  text: string;
  body: Envelope<D>;
}

/** POST with an Idempotency-Key, keeping the exact response bytes. */
async function send<E extends Endpoint>(
  endpoint: E,
  user: TestUser,
  body: BodyOf<E>,
  key?: string,
): Promise<RawResult<DataOf<E>>> {
  const name = endpoint.meta.name;
  const headers: Record<string, string> = {
    Authorization: `Bearer ${user.accessToken}`,
    'Content-Type': 'application/json',
  };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  const res = await fetch(`${baseUrl()}/${name}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  // checked against the document like every answer (the replay's header included)
  await checkSuccessBody(name, res.status, JSON.parse(text), 'POST', res.headers);
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text, body: JSON.parse(text) };
}

const emailOf = (u: TestUser) => `${u.id}@customers.escrow.ng`;

const initializeCalls = async (u: TestUser) =>
  (await paystack.requests('/transaction/initialize')).filter((r) => r.body?.email === emailOf(u));

const transactionsOf = (userId: string, type: string) =>
  testDb()<{ id: string; status: string }[]>`
    select id, status::text from public.transactions where user_id = ${userId} and type = ${type} order by created_at`;

const balanceOf = async (u: TestUser) => (await get(walletGet, { token: u.accessToken })).body.data.balance as number;

async function fund(user: TestUser, naira: number) {
  const res = await post(walletTopup, { amount: naira }, { token: user.accessToken });
  expect(res.status).toBe(200);
  await paystack.chargeSuccess(res.body.data.reference);
}

const newAccountNumber = () => `0${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;

async function payoutBody(name = 'ADA OBI') {
  const account_number = newAccountNumber();
  await paystack.registerAccount('058', account_number, name);
  return { bank_code: '058', bank_name: 'Guaranty Trust Bank', account_number, account_name: 'Ada Obi' };
}

const cardBody = () => ({
  authorization_code: `AUTH_idem${randomInt(1, 1e9)}`,
  last4: '1234',
  brand: 'mastercard',
  exp_month: '07',
  exp_year: '2031',
  signature: `SIG_idem_${randomUUID()}`,
});

/** Moves a stored key back in time. */
async function backdate(userId: string, key: string, hours: number) {
  const rows = await testDb()`
    update private.idempotency_keys set created_at = now() - make_interval(hours => ${hours})
     where user_id = ${userId} and key = ${key} returning key`;
  expect(rows).toHaveLength(1);
}

/** Checks a burst of same-key requests: one original, the rest replays of it or "still processing" 409s. */
function expectOneEffect<D>(results: RawResult<D>[], okStatus: number) {
  const originals = results.filter((r) => r.replayed === null && r.status === okStatus);
  expect(originals, results.map((r) => `${r.status} ${r.replayed} ${r.text}`).join('\n')).toHaveLength(1);
  for (const r of results) {
    if (r === originals[0]) continue;
    if (r.status === 409) {
      expect(r.body.error).toMatch(/still being processed/);
      expect(r.replayed).toBeNull();
    } else {
      expect(r.replayed).toBe('true');
      expect(r.text).toBe(originals[0]!.text);
    }
  }
  return originals[0]!;
}

// ---- wallet-topup --------------------------------------------------------------------------

describe('wallet-topup', () => {
  describe('Idempotency-Key', () => {
    it('the same key and body replays the first response byte for byte, with no second charge', async () => {
      const user = await signUp({ tier: 1 });
      const key = randomUUID();
      const first = await send(walletTopup, user, { amount: 1500 }, key);
      expect(first.status, first.text).toBe(200);
      expect(first.replayed).toBeNull();

      const second = await send(walletTopup, user, { amount: 1500 }, key);
      expect(second.status).toBe(200);
      expect(second.replayed).toBe('true');
      expect(second.text).toBe(first.text);

      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(1);
      expect(await initializeCalls(user)).toHaveLength(1);

      // even after the charge completed, the replay is the first answer (pending), not a new state
      await paystack.chargeSuccess(first.body.data.reference);
      const third = await send(walletTopup, user, { amount: 1500 }, key);
      expect(third.text).toBe(first.text);
      expect(await balanceOf(user)).toBe(1500);

      // without a key the same body is a new top-up
      const fresh = await send(walletTopup, user, { amount: 1500 });
      expect(fresh.status).toBe(200);
      expect(fresh.body.data.reference).not.toBe(first.body.data.reference);
      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(2);
    });

    it('the same key with another body is 409 and does nothing', async () => {
      const user = await signUp({ tier: 1 });
      const key = `topup-${randomUUID()}`;
      const first = await send(walletTopup, user, { amount: 1000 }, key);
      expect(first.status).toBe(200);
      const other = await send(walletTopup, user, { amount: 2000 }, key);
      expect(other.status).toBe(409);
      expect(other.body).toMatchObject({ success: false, status: 409 });
      expect(other.body.details?.map((d: { field: string }) => d.field)).toEqual(['Idempotency-Key']);
      expect(other.replayed).toBeNull();
      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(1);
      expect(await initializeCalls(user)).toHaveLength(1);
      // and the original is still replayable
      expect((await send(walletTopup, user, { amount: 1000 }, key)).text).toBe(first.text);
    });

    it('5 concurrent requests with one key: one charge; the others replay it or are told it is still being processed', async () => {
      const user = await signUp({ tier: 1 });
      const key = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => send(walletTopup, user, { amount: 3000 }, key)),
      );
      expectOneEffect(results, 200);
      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(1);
      expect(await initializeCalls(user)).toHaveLength(1);
    });

    it('another user may use the same key independently', async () => {
      const a = await signUp({ tier: 1 });
      const b = await signUp({ tier: 1 });
      const key = `shared-${randomUUID()}`;
      const ra = await send(walletTopup, a, { amount: 1000 }, key);
      const rb = await send(walletTopup, b, { amount: 1000 }, key);
      expect([ra.status, rb.status]).toEqual([200, 200]);
      expect(rb.replayed).toBeNull();
      expect(rb.body.data.reference).not.toBe(ra.body.data.reference);
      expect(await transactionsOf(a.id, 'wallet_topup')).toHaveLength(1);
      expect(await transactionsOf(b.id, 'wallet_topup')).toHaveLength(1);
      // b's own first request is what b's key replays
      expect((await send(walletTopup, b, { amount: 1000 }, key)).replayed).toBe('true');
    });

    it('keys are per operation: the same key on card-add is a separate request', async () => {
      const user = await signUp({ tier: 1 });
      const key = randomUUID();
      expect((await send(walletTopup, user, { amount: 1000 }, key)).status).toBe(200);
      const body = cardBody();
      await paystack.authorizeUser(user.id, body.authorization_code);
      const card = await send(cardAdd, user, body, key);
      expect(card.status, card.text).toBe(201);
      expect(card.replayed).toBeNull();
    });

    it('a key older than 24 hours is forgotten: the request runs again, even with another body', async () => {
      const user = await signUp({ tier: 1 });
      const key = randomUUID();
      const first = await send(walletTopup, user, { amount: 1000 }, key);
      expect(first.status).toBe(200);

      await backdate(user.id, key, 23);
      const stillKnown = await send(walletTopup, user, { amount: 1000 }, key);
      expect(stillKnown.replayed).toBe('true');

      await backdate(user.id, key, 25);
      const again = await send(walletTopup, user, { amount: 1000 }, key);
      expect(again.status).toBe(200);
      expect(again.replayed).toBeNull();
      expect(again.body.data.reference).not.toBe(first.body.data.reference);
      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(2);

      await backdate(user.id, key, 25);
      const otherBody = await send(walletTopup, user, { amount: 5000 }, key);
      expect(otherBody.status).toBe(200);
      expect(otherBody.replayed).toBeNull();
      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(3);
    });

    it('a 5xx answer is not remembered: the same key can be retried', async () => {
      const user = await signUp({ tier: 1 });
      await paystack.fail({ path: '/transaction/initialize', field: 'email', value: emailOf(user) }, 'unavailable');
      const key = randomUUID();
      const first = await send(walletTopup, user, { amount: 1000 }, key);
      expect(first.status).toBe(503);
      const retry = await send(walletTopup, user, { amount: 1000 }, key);
      expect(retry.status).toBe(503);
      expect(retry.replayed).toBeNull();
      const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.idempotency_keys where user_id = ${user.id} and key = ${key}`;
      expect(row?.n).toBe(0);
    });

    it('rejects a malformed Idempotency-Key with 400', async () => {
      const user = await signUp({ tier: 1 });
      for (const key of ['x'.repeat(256), 'has space', 'tab\there']) {
        const res = await send(walletTopup, user, { amount: 1000 }, key);
        expect(res.status, key).toBe(400);
        expect(res.body.details?.map((d: { field: string }) => d.field)).toEqual(['Idempotency-Key']);
      }
      expect(await transactionsOf(user.id, 'wallet_topup')).toHaveLength(0);
    });
  });
});

// ---- wallet-withdraw -----------------------------------------------------------------------

describe('wallet-withdraw', () => {
  describe('Idempotency-Key', () => {
    it('replays the first withdrawal: one transaction, one /transfer, the balance debited once', async () => {
      const user = await signUp({ tier: 1 });
      await fund(user, 5000);
      const payout = await send(payoutAdd, user, await payoutBody());
      expect(payout.status, payout.text).toBe(201);
      const key = randomUUID();

      const first = await send(walletWithdraw, user, { amount: 2000 }, key);
      expect(first.status, first.text).toBe(200);
      const second = await send(walletWithdraw, user, { amount: 2000 }, key);
      expect(second.status).toBe(200);
      expect(second.replayed).toBe('true');
      expect(second.text).toBe(first.text);

      expect(await transactionsOf(user.id, 'withdrawal')).toHaveLength(1);
      expect((await paystack.requests('/transfer')).filter((r) => r.body?.reference === first.body.data.id))
        .toHaveLength(
          1,
        );
      expect(await balanceOf(user)).toBe(3000);

      const other = await send(walletWithdraw, user, { amount: 2500 }, key);
      expect(other.status).toBe(409);
      expect(await balanceOf(user)).toBe(3000);
    });

    it('5 concurrent withdrawals with one key move the money once', async () => {
      const user = await signUp({ tier: 1 });
      await fund(user, 5000);
      expect((await send(payoutAdd, user, await payoutBody())).status).toBe(201);
      const key = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => send(walletWithdraw, user, { amount: 1000 }, key)),
      );
      const original = expectOneEffect(results, 200);
      expect(await transactionsOf(user.id, 'withdrawal')).toHaveLength(1);
      expect((await paystack.requests('/transfer')).filter((r) => r.body?.reference === original.body.data.id))
        .toHaveLength(1);
      expect(await balanceOf(user)).toBe(4000);
    });

    it('a refusal (409 insufficient funds) is remembered too: the same key replays it', async () => {
      const user = await signUp({ tier: 1 });
      expect((await send(payoutAdd, user, await payoutBody())).status).toBe(201);
      const key = randomUUID();
      const first = await send(walletWithdraw, user, { amount: 1000 }, key);
      expect(first.status).toBe(409);
      await fund(user, 2000);
      const replay = await send(walletWithdraw, user, { amount: 1000 }, key);
      expect(replay.status).toBe(409);
      expect(replay.replayed).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(await transactionsOf(user.id, 'withdrawal')).toHaveLength(0);
      // a new key does the withdrawal
      expect((await send(walletWithdraw, user, { amount: 1000 }, randomUUID())).status).toBe(200);
      expect(await balanceOf(user)).toBe(1000);
    });
  });
});

// ---- card-add and payout-add ---------------------------------------------------------------

describe('card-add', () => {
  describe('Idempotency-Key', () => {
    it('card-add replays the 201 with one card saved (without a key, the same card again is a 200)', async () => {
      const user = await signUp({ tier: 1 });
      const body = cardBody();
      await paystack.authorizeUser(user.id, body.authorization_code);
      const key = randomUUID();
      const first = await send(cardAdd, user, body, key);
      expect(first.status, first.text).toBe(201);
      const second = await send(cardAdd, user, body, key);
      expect(second.status).toBe(201);
      expect(second.replayed).toBe('true');
      expect(second.text).toBe(first.text);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from public.saved_cards where user_id = ${user.id}`;
      expect(n?.n).toBe(1);

      const unkeyed = await send(cardAdd, user, body);
      expect(unkeyed.status).toBe(200);
      expect(unkeyed.replayed).toBeNull();

      const changed = await send(cardAdd, user, { ...body, last4: '9999' }, key);
      expect(changed.status).toBe(409);
    });

    it('card-add: 5 concurrent with one key save one card', async () => {
      const user = await signUp({ tier: 1 });
      const body = cardBody();
      await paystack.authorizeUser(user.id, body.authorization_code);
      const key = randomUUID();
      const results = await Promise.all(Array.from({ length: 5 }, () => send(cardAdd, user, body, key)));
      expectOneEffect(results, 201);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from public.saved_cards where user_id = ${user.id}`;
      expect(n?.n).toBe(1);
    });
  });
});

describe('payout-add', () => {
  describe('Idempotency-Key', () => {
    it('payout-add replays the 201 with one account and one provider call (without a key, a duplicate is 409)', async () => {
      const user = await signUp();
      const body = await payoutBody();
      const key = randomUUID();
      const first = await send(payoutAdd, user, body, key);
      expect(first.status, first.text).toBe(201);
      const second = await send(payoutAdd, user, body, key);
      expect(second.status).toBe(201);
      expect(second.replayed).toBe('true');
      expect(second.text).toBe(first.text);
      expect(first.body.data.account_number).toBe(`******${body.account_number.slice(-4)}`);

      const recipients = (await paystack.requests('/transferrecipient')).filter((r) =>
        r.body?.account_number === body.account_number
      );
      expect(recipients).toHaveLength(1);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from public.payout_accounts where user_id = ${user.id}`;
      expect(n?.n).toBe(1);

      const unkeyed = await send(payoutAdd, user, body);
      expect(unkeyed.status).toBe(409);
      const changed = await send(payoutAdd, user, { ...body, bank_name: 'GTBank' }, key);
      expect(changed.status).toBe(409);
      expect(changed.body.details?.map((d: { field: string }) => d.field)).toEqual(['Idempotency-Key']);
    });

    it('payout-add: 5 concurrent with one key create one account', async () => {
      const user = await signUp();
      const body = await payoutBody();
      const key = randomUUID();
      const results = await Promise.all(Array.from({ length: 5 }, () => send(payoutAdd, user, body, key)));
      expectOneEffect(results, 201);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from public.payout_accounts where user_id = ${user.id}`;
      expect(n?.n).toBe(1);
      const recipients = (await paystack.requests('/transferrecipient')).filter((r) =>
        r.body?.account_number === body.account_number
      );
      expect(recipients).toHaveLength(1);
    });

    it('another user may use the same key for their own payout account', async () => {
      const a = await signUp();
      const b = await signUp();
      const key = randomUUID();
      const ra = await send(payoutAdd, a, await payoutBody(), key);
      const rb = await send(payoutAdd, b, await payoutBody(), key);
      expect([ra.status, rb.status]).toEqual([201, 201]);
      expect(rb.replayed).toBeNull();
      expect(rb.body.data.id).not.toBe(ra.body.data.id);
    });
  });
});

describe('escrow-create', () => {
  it('the invite token, a secret shown once, is never stored with the key; a replay answers the same token', async () => {
    const [user, other] = await Promise.all([signUp(), signUp()]);
    const body = {
      category: 'goods_products' as const,
      payer_role: 'counterparty' as const,
      title: 'Token kept out',
      counterparty_phone: other.phone,
      amount: 2000,
    };
    const key = randomUUID();
    const first = await send(escrowCreate, user, body, key);
    expect(first.status, first.text).toBe(201);
    const token = first.body.data.invite_token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const [stored] = await testDb()<{ response_body: string }[]>`
      select response_body from private.idempotency_keys where user_id = ${user.id} and key = ${key}`;
    expect(stored!.response_body).not.toContain(token);
    expect(JSON.parse(stored!.response_body).data.invite_token).toBeNull();

    const replay = await send(escrowCreate, user, body, key);
    expect([replay.status, replay.replayed, replay.text]).toEqual([201, 'true', first.text]);
    // and it is the escrow's token: the counterparty accepts with it
    const accepted = await post(escrowAccept, { invite_token: token }, { token: other.accessToken });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  });
});

describe('Idempotency-Key claimed by a request that died', () => {
  it('a provider claim with no answer is "in progress" for 60 s, then a retry takes it over', async () => {
    const user = await signUp({ tier: 1 });
    const key = `died-${crypto.randomUUID()}`;
    const body = {
      authorization_code: 'AUTH_died',
      last4: '4081',
      brand: 'visa',
      exp_month: '12',
      exp_year: '2030',
      signature: `SIG-${key}`,
    };
    await paystack.authorizeUser(user.id, body.authorization_code);
    const raw = JSON.stringify(body);
    const hash = createHash('sha256').update(`card-add\n${raw}`).digest('hex');
    // a claim with no answer, as a request that died after its first transaction leaves it
    await testDb()`insert into private.idempotency_keys (user_id, operation, key, request_hash)
                   values (${user.id}, 'card-add', ${key}, ${hash})`;
    const blocked = await post(cardAdd, body, { token: user.accessToken, headers: { 'Idempotency-Key': key } });
    expect([blocked.status, blocked.body.code]).toEqual([409, 'idempotency_in_progress']);
    await testDb()`update private.idempotency_keys set claimed_at = now() - interval '61 seconds' where key = ${key}`;
    const retried = await post(cardAdd, body, { token: user.accessToken, headers: { 'Idempotency-Key': key } });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const replayed = await post(cardAdd, body, { token: user.accessToken, headers: { 'Idempotency-Key': key } });
    expect(replayed.status).toBe(201);
    expect(replayed.body).toEqual(retried.body);
  });

  it('an atomic claim waits at most 2 s for a first request still in its transaction, then answers 409', async () => {
    const user = await signUp();
    const key = `held-${crypto.randomUUID()}`;
    // another transaction holds the key's row uncommitted, as a first request still running would
    const holder = await testDb().reserve();
    try {
      await holder`begin`;
      await holder`insert into private.idempotency_keys (user_id, operation, key, request_hash)
                   values (${user.id}, 'escrow-create', ${key}, 'x')`;
      const started = Date.now();
      const res = await post('escrow-create', {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Held key',
        counterparty_phone: (await signUp()).phone,
        amount: 1000,
      }, { token: user.accessToken, headers: { 'Idempotency-Key': key } });
      expect([res.status, res.body.code]).toEqual([409, 'idempotency_in_progress']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    } finally {
      await holder`rollback`;
      holder.release();
    }
  });
});
