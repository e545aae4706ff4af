// Merchant accounts and their API keys (docs/merchants.md): merchant-create, merchant-get,
// merchant-key-create, merchant-key-list and merchant-key-revoke through the real server, and the
// merchant key auth mode (shared/merchants/key-auth.ts). No operation takes a key yet, so the mode
// is exercised in-process on toy endpoints built with it (the whole endpoint builder and the real
// database, as the real functions will run it): who the key stands for, a revoked or guessed key,
// the rate limit, last_used_at and the Idempotency-Keys it keeps per merchant.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { asService, closeDb } from '../../shared/core/db.ts';
import { endpoint } from '../../shared/core/endpoint.ts';
import { merchantKeyHash, merchantKeyMode } from '../../shared/merchants/key-auth.ts';
import { KEY_RANDOM_LENGTH, keyModePrefix, MAX_MERCHANT_KEYS, randomBase62 } from '../../shared/merchants/merchants.ts';
import { expectError, expectOk, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { signUp, type TestUser } from '../support/users.ts';
import merchantCreate from '../../supabase/functions/merchant-create/handler.ts';
import merchantGet from '../../supabase/functions/merchant-get/handler.ts';
import merchantKeyCreate from '../../supabase/functions/merchant-key-create/handler.ts';
import merchantKeyList from '../../supabase/functions/merchant-key-list/handler.ts';
import merchantKeyRevoke from '../../supabase/functions/merchant-key-revoke/handler.ts';

afterAll(() => closeDb());

// ---- helpers -------------------------------------------------------------------------------

/** A user at tier 4 who owns a merchant. */
async function owner(name = 'Ada Phones'): Promise<TestUser & { merchantId: string }> {
  const user = await signUp({ tier: 4 });
  const data = expectOk(await post(merchantCreate, { name }, { token: user.accessToken }), 201);
  return { ...user, merchantId: data.id };
}

const createKey = async (user: TestUser, name = 'server') =>
  expectOk(await post(merchantKeyCreate, { name }, { token: user.accessToken }), 201);

/** A toy endpoint of the merchant key mode: answers whom the key stands for, and counts its runs. */
function toy(opts: { maxPerMinute?: number } = {}) {
  let runs = 0;
  const handler = endpoint({
    name: 'merchant-toy',
    method: 'POST',
    auth: merchantKeyMode({ maxPerMinute: opts.maxPerMinute ?? 10_000 }),
    idempotent: true,
    status: 201,
    // one statement, as every real handler sends: the Idempotency-Key's claim rides in the first
    handler: async ({ user }) => {
      await asService((tx) => tx`select 1`);
      return { merchant_id: user.merchantId, key_id: user.keyId, run: ++runs };
    },
  });
  const call = async (authorization: string | null, headers: Record<string, string> = {}, body = '{}') => {
    const res = await handler(
      new Request('http://127.0.0.1/merchant-toy', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}), ...headers },
        body,
      }),
    );
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  return { call, runs: () => runs };
}

const bearer = (key: string) => `Bearer ${key}`;

// ---- merchant-create -------------------------------------------------------------------------

describe('merchant-create', () => {
  it('opens an active merchant for a tier-4 owner (201)', async () => {
    const user = await signUp({ tier: 4 });
    const data = expectOk(await post(merchantCreate, { name: '  Ada Phones 24 ' }, { token: user.accessToken }), 201);
    expect(data).toMatchObject({ name: 'Ada Phones 24', status: 'active' });
    const [row] = await testDb()<{ owner_id: string }[]>`select owner_id from private.merchants where id = ${data.id}`;
    expect(row?.owner_id).toBe(user.id);
  });

  it('refuses an owner below tier 4 with kyc_tier_required, naming tier 4', async () => {
    for (const tier of [undefined, 1, 3]) {
      const user = await signUp({ tier });
      const res = await post(merchantCreate, { name: 'Ada Phones' }, { token: user.accessToken });
      expectError(res, 403, 'kyc_tier_required');
      expect(res.body.error).toContain('tier 4 is required');
      expect(res.body.error).toContain('merchant account');
    }
  });

  it('refuses a second merchant of the same owner (409 merchant_exists), even when both race', async () => {
    const user = await signUp({ tier: 4 });
    const both = await Promise.all(
      ['Ada Phones', 'Ada Gadgets'].map((name) => post(merchantCreate, { name }, { token: user.accessToken })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    expectError(both.find((r) => r.status === 409)!, 409, 'merchant_exists');
    const [n] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from private.merchants where owner_id = ${user.id}`;
    expect(n?.n).toBe(1);
  });

  it('replays the same answer for the same Idempotency-Key', async () => {
    const user = await signUp({ tier: 4 });
    const key = randomUUID();
    const opts = { token: user.accessToken, headers: { 'Idempotency-Key': key } };
    const first = await post(merchantCreate, { name: 'Ada Phones' }, opts);
    const again = await post(merchantCreate, { name: 'Ada Phones' }, opts);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.id).toBe(first.body.data.id);
  });

  describe('the name', () => {
    it.each([
      ['a web address', 'www adaphones'],
      ['a web address', 'Visit https adaphones'],
      ['a web address', 'adaphones dot com'],
      ['a web address', 'adaphones.com'],
      ['a phone number', 'Call 08031234567'],
      ['a phone number', 'Call 0803 123 4567'],
      ['a zero-width space', 'Ada\u200bPhones'],
      ['a right-to-left override', 'Ada\u202ePhones'],
      ['a look-alike letter', '\u0410da Phones'],
      ['a symbol', 'Ada & Sons'],
      ['one letter', 'A'],
      ['41 letters', 'x'.repeat(41)],
    ])('refuses %s (400): %j', async (_what, name) => {
      const user = await signUp({ tier: 4 });
      const res = await post(merchantCreate, { name }, { token: user.accessToken });
      expect(expectError(res, 400, 'validation_failed')).toEqual(['name']);
      const [n] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.merchants where owner_id = ${user.id}`;
      expect(n?.n).toBe(0);
    });
  });

  it('is 401 without a session', async () => {
    expectError(await post(merchantCreate, { name: 'Ada Phones' }), 401, 'unauthenticated');
  });
});

// ---- merchant-get ----------------------------------------------------------------------------

describe('merchant-get', () => {
  it("answers the caller's own merchant", async () => {
    const a = await owner('Ada Phones');
    await owner('Bola Cars');
    expect(expectOk(await get(merchantGet, { token: a.accessToken }))).toMatchObject({
      id: a.merchantId,
      name: 'Ada Phones',
      status: 'active',
    });
  });

  it('is 404 merchant_not_found for a user without one', async () => {
    const user = await signUp({ tier: 4 });
    expectError(await get(merchantGet, { token: user.accessToken }), 404, 'merchant_not_found');
  });
});

// ---- merchant-key-create ---------------------------------------------------------------------

describe('merchant-key-create', () => {
  it('answers the key once, esk_test_ on this stack, and stores only its SHA-256', async () => {
    const a = await owner();
    const made = await createKey(a, 'production server');
    expect(keyModePrefix()).toBe('esk_test_');
    expect(made.key).toMatch(new RegExp(`^esk_test_[0-9A-Za-z]{${KEY_RANDOM_LENGTH}}$`));
    expect(made.prefix).toBe(made.key.slice(0, 'esk_test_'.length + 4));
    const [row] = await testDb()<Record<string, unknown>[]>`
      select * from private.merchant_api_keys where id = ${made.id}`;
    expect(row).toMatchObject({
      merchant_id: a.merchantId,
      prefix: made.prefix,
      key_hash: await merchantKeyHash(made.key),
    });
    // the key is nowhere in its row, nor in any answer kept for a replay
    expect(JSON.stringify(row)).not.toContain(made.key.slice('esk_test_'.length));
    const [kept] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.idempotency_keys where response_body like ${`%${made.key}%`}`;
    expect(kept?.n).toBe(0);
  });

  it('makes another key on a repeat, even with an Idempotency-Key: none is ever kept', async () => {
    const a = await owner();
    const opts = { token: a.accessToken, headers: { 'Idempotency-Key': randomUUID() } };
    const first = expectOk(await post(merchantKeyCreate, { name: 'server' }, opts), 201);
    const again = await post(merchantKeyCreate, { name: 'server' }, opts);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(expectOk(again, 201).key).not.toBe(first.key);
  });

  it('gives keys that differ in their random part', async () => {
    const a = await owner();
    const keys = await Promise.all([1, 2, 3].map(() => createKey(a)));
    expect(new Set(keys.map((k) => k.key)).size).toBe(3);
    // 62 letters and digits, each as likely: 10,000 characters use them all
    expect(new Set(randomBase62(10_000)).size).toBe(62);
  });

  it('refuses a key beyond MAX_MERCHANT_KEYS live keys, even at once (409 merchant_key_limit)', async () => {
    // each key has its own rate limit: keys without a bound would be a rate limit without one
    const a = await owner();
    const made = await Promise.all(
      Array.from(
        { length: MAX_MERCHANT_KEYS + 3 },
        () => post(merchantKeyCreate, { name: 'k' }, { token: a.accessToken }),
      ),
    );
    expect(made.filter((r) => r.status === 201)).toHaveLength(MAX_MERCHANT_KEYS);
    for (const r of made.filter((r) => r.status !== 201)) {
      expectError(r, 409, 'merchant_key_limit');
      expect(r.body.error).toBe(`A merchant may have at most ${MAX_MERCHANT_KEYS} live API keys`);
    }
    // a revoked key frees its place
    const first = made.find((r) => r.status === 201)!.body.data;
    expectOk(await post(merchantKeyRevoke, { key_id: first.id }, { token: a.accessToken }));
    await createKey(a);
    expectError(await post(merchantKeyCreate, { name: 'k' }, { token: a.accessToken }), 409, 'merchant_key_limit');
  });

  it('is 403 merchant_frozen for a frozen merchant, whose keys are refused anyway', async () => {
    const a = await owner();
    await testDb()`update private.merchants set status = 'frozen' where id = ${a.merchantId}`;
    expectError(await post(merchantKeyCreate, { name: 'server' }, { token: a.accessToken }), 403, 'merchant_frozen');
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.merchant_api_keys where merchant_id = ${a.merchantId}`;
    expect(n?.n).toBe(0);
  });

  it('is 404 merchant_not_found for a user without a merchant', async () => {
    const user = await signUp({ tier: 4 });
    expectError(
      await post(merchantKeyCreate, { name: 'server' }, { token: user.accessToken }),
      404,
      'merchant_not_found',
    );
  });
});

// ---- merchant-key-list -----------------------------------------------------------------------

describe('merchant-key-list', () => {
  it("lists the merchant's live keys, newest first, never the key", async () => {
    const a = await owner();
    const b = await owner('Bola Cars');
    const first = await createKey(a, 'first');
    const second = await createKey(a, 'second');
    await createKey(b, 'not mine');
    const list = expectOk(await get(merchantKeyList, { token: a.accessToken }));
    expect(list.map((k) => k.name)).toEqual(['second', 'first']);
    expect(list[0]).toEqual({
      id: second.id,
      name: 'second',
      prefix: second.prefix,
      created_at: second.created_at,
      last_used_at: null,
    });
    const text = JSON.stringify(list);
    for (const k of [first, second]) expect(text).not.toContain(k.key);
  });

  it('shows when a key was last used, and drops a revoked key', async () => {
    const a = await owner();
    const used = await createKey(a, 'used');
    const revoked = await createKey(a, 'revoked');
    expect((await toy().call(bearer(used.key))).status).toBe(201);
    expectOk(await post(merchantKeyRevoke, { key_id: revoked.id }, { token: a.accessToken }));
    const list = expectOk(await get(merchantKeyList, { token: a.accessToken }));
    expect(list.map((k) => k.id)).toEqual([used.id]);
    expect(list[0]?.last_used_at).not.toBeNull();
  });

  it('is 404 merchant_not_found for a user without a merchant', async () => {
    const user = await signUp({ tier: 4 });
    expectError(await get(merchantKeyList, { token: user.accessToken }), 404, 'merchant_not_found');
  });
});

// ---- merchant-key-revoke ---------------------------------------------------------------------

describe('merchant-key-revoke', () => {
  it('refuses the key from the next request on (401), and a repeat answers the same revocation', async () => {
    const a = await owner();
    const made = await createKey(a);
    const t = toy();
    expect((await t.call(bearer(made.key))).status).toBe(201);
    const revoked = expectOk(await post(merchantKeyRevoke, { key_id: made.id }, { token: a.accessToken }));
    expect(revoked.key_id).toBe(made.id);
    const after = await t.call(bearer(made.key));
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ code: 'unauthenticated', error: 'Invalid or revoked API key' });
    const again = expectOk(await post(merchantKeyRevoke, { key_id: made.id }, { token: a.accessToken }));
    expect(again.revoked_at).toBe(revoked.revoked_at);
  });

  it("cannot revoke another merchant's key (404), which keeps working", async () => {
    const a = await owner();
    const b = await owner('Bola Cars');
    const bKey = await createKey(b);
    const res = await post(merchantKeyRevoke, { key_id: bKey.id }, { token: a.accessToken });
    expect(expectError(res, 404, 'merchant_key_not_found')).toEqual(['key_id']);
    expect((await toy().call(bearer(bKey.key))).status).toBe(201);
    // nor can a user without a merchant
    const stranger = await signUp({ tier: 4 });
    expectError(await post(merchantKeyRevoke, { key_id: bKey.id }, { token: stranger.accessToken }), 404);
  });

  it('is 404 for a key that does not exist', async () => {
    const a = await owner();
    expectError(await post(merchantKeyRevoke, { key_id: randomUUID() }, { token: a.accessToken }), 404);
  });
});

// ---- the key auth mode -----------------------------------------------------------------------

describe('the merchant key auth mode', () => {
  it("authenticates as the key's own merchant: a key of A never stands for B", async () => {
    const a = await owner();
    const b = await owner('Bola Cars');
    const [aKey, bKey] = [await createKey(a), await createKey(b)];
    const t = toy();
    const asA = await t.call(bearer(aKey.key));
    const asB = await t.call(bearer(bKey.key));
    expect(asA.body.data).toMatchObject({ merchant_id: a.merchantId, key_id: aKey.id });
    expect(asB.body.data).toMatchObject({ merchant_id: b.merchantId, key_id: bKey.id });
  });

  it('refuses a guessed key, a changed key, a session token and no key (401), running nothing', async () => {
    const a = await owner();
    const made = await createKey(a);
    const t = toy();
    const flipped = made.key.slice(0, -1) + (made.key.endsWith('a') ? 'b' : 'a');
    for (
      const auth of [
        bearer(`esk_test_${randomBase62(KEY_RANDOM_LENGTH)}`),
        bearer(`esk_live_${randomBase62(KEY_RANDOM_LENGTH)}`),
        bearer(flipped),
        bearer(made.key.toLowerCase()),
        bearer(a.accessToken),
        made.key,
        null,
      ]
    ) {
      const res = await t.call(auth);
      expect(res.status, String(auth)).toBe(401);
      expect(res.body.code).toBe('unauthenticated');
    }
    expect(t.runs()).toBe(0);
  });

  it('limits each key per minute (429 with Retry-After); another key of the merchant is not held back', async () => {
    const a = await owner();
    const [one, two] = [await createKey(a), await createKey(a)];
    const t = toy({ maxPerMinute: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.call(bearer(one.key))).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    const limited = await t.call(bearer(one.key));
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect((await t.call(bearer(two.key))).status).toBe(201);
  });

  it('records last_used_at at most once a minute', async () => {
    const a = await owner();
    const made = await createKey(a);
    const t = toy();
    await t.call(bearer(made.key));
    const read = async () =>
      (await testDb()<
        { at: string }[]
      >`select last_used_at::text as at from private.merchant_api_keys where id = ${made.id}`)[0]?.at;
    const first = await read();
    expect(first).toBeTruthy();
    await t.call(bearer(made.key));
    expect(await read()).toBe(first);
    // a minute later, the next request moves it
    await testDb()`update private.merchant_api_keys set last_used_at = last_used_at - interval '61 seconds' where id = ${made.id}`;
    const moved = await read();
    await t.call(bearer(made.key));
    expect(await read()).not.toBe(moved);
  });

  it("keeps a key request's Idempotency-Key per merchant, whichever of its keys sends it", async () => {
    const a = await owner();
    const b = await owner('Bola Cars');
    const [a1, a2, b1] = [await createKey(a), await createKey(a), await createKey(b)];
    const t = toy();
    const idem = { 'Idempotency-Key': randomUUID() };
    const first = await t.call(bearer(a1.key), idem);
    expect(first.status).toBe(201);
    const replay = await t.call(bearer(a2.key), idem);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    // the same key string of another merchant is its own
    const other = await t.call(bearer(b1.key), idem);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(other.body.data.merchant_id).toBe(b.merchantId);
    expect(t.runs()).toBe(2);
    const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.idempotency_keys where user_id = ${a.merchantId} and key = ${
      idem['Idempotency-Key']
    }`;
    expect(row?.n).toBe(1);
  });

  it('refuses the keys of a frozen merchant (401)', async () => {
    const a = await owner();
    const made = await createKey(a);
    await testDb()`update private.merchants set status = 'frozen' where id = ${a.merchantId}`;
    expect((await toy().call(bearer(made.key))).status).toBe(401);
  });
});
