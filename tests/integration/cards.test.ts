// Saved cards through the real HTTP server: card-add, card-list, card-set-default, card-remove.
// The provider's authorization code is stored server-side only (private.card_authorizations)
// and must never appear in any response. Saving a card needs tier 1 (the identity floor: card-add
// refuses a tier-0 account, tests/integration/kyc-floor.test.ts), so the users here who save or
// try to save cards are at tier 1.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResult, type BodyOf, expectError, expectOk, get, post, postRaw } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import cardList from '../../supabase/functions/card-list/handler.ts';
import cardRemove from '../../supabase/functions/card-remove/handler.ts';
import cardSetDefault from '../../supabase/functions/card-set-default/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

/** A new user at tier 1, the lowest tier that may save a card. */
const cardHolder = () => signUp({ tier: 1 });

const CARD_KEYS = ['bank', 'brand', 'created_at', 'exp_month', 'exp_year', 'id', 'is_default', 'last4', 'signature'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const rand = () => randomBytes(6).toString('hex');

/** A valid card-add body; authorization_code and signature unique to this call. */
const cardBody = (over: Record<string, unknown> = {}) => ({
  authorization_code: `AUTH_${rand()}`,
  last4: '4081',
  brand: 'visa',
  exp_month: '12',
  exp_year: '2030',
  signature: `SIG_${rand()}`,
  bank: 'TEST BANK',
  ...over,
});

/** card-add of a body whose authorization_code the Paystack fake issued to the user (a card they paid with). */
async function addCard(user: TestUser, body: BodyOf<typeof cardAdd>, headers?: Record<string, string>) {
  const code = (body as { authorization_code?: unknown }).authorization_code;
  if (typeof code === 'string' && code.trim() !== '') await paystack.authorizeUser(user.id, code);
  return await post(cardAdd, body, { token: user.accessToken, headers });
}
const listCards = (user: TestUser) => get(cardList, { token: user.accessToken });
const setDefault = (user: TestUser, card_id: string) => post(cardSetDefault, { card_id }, { token: user.accessToken });
const removeCard = (user: TestUser, card_id: string) => post(cardRemove, { card_id }, { token: user.accessToken });

/** Adds a card and returns the saved card object (201). */
async function addOk(user: TestUser, over: Record<string, unknown> = {}) {
  const body = cardBody(over);
  const res = await addCard(user, body);
  const card = expectOk(res, 201);
  expectNoSecret(res, body.authorization_code as string);
  return { card, body };
}

/** The raw response text never carries the authorization code, nor a field of that name. */
function expectNoSecret(res: ApiResult, ...codes: string[]) {
  const text = JSON.stringify(res.body);
  expect(text).not.toContain('authorization_code');
  for (const code of codes) expect(text).not.toContain(code);
}

async function cardRows(userId: string) {
  return testDb()<{ id: string; is_default: boolean; signature: string; authorization_code: string | null }[]>`
    select c.id, c.is_default, c.signature, ca.authorization_code
      from public.saved_cards c left join private.card_authorizations ca on ca.card_id = c.id
     where c.user_id = ${userId}
     order by c.created_at, c.id`;
}

async function listIds(user: TestUser): Promise<{ id: string; is_default: boolean }[]> {
  const res = await listCards(user);
  const data = expectOk(res) as { id: string; is_default: boolean }[];
  return data.map((c) => ({ id: c.id, is_default: c.is_default }));
}

// ---- card-add ------------------------------------------------------------------------------

describe('card-add', () => {
  // docs/security.md, "Input, headers and the local server": a card is saved only once the payments
  // provider confirms its authorization as a reusable card of the caller's customer (Paystack's
  // check_authorization), never on the client's word.
  describe('the provider confirms the authorization', () => {
    const checks = async (code: string) =>
      (await paystack.requests('/transaction/check_authorization')).filter((r) => r.body?.authorization_code === code);
    const refusedOnCode = (res: ApiResult) => {
      expect(expectError(res, 409, 'card_authorization_invalid')).toEqual(['authorization_code']);
    };

    it('refuses a made-up code with 409 naming authorization_code, and saves nothing', async () => {
      const user = await cardHolder();
      const body = cardBody();
      refusedOnCode(await post(cardAdd, body, { token: user.accessToken }));
      expect(await cardRows(user.id)).toEqual([]);
      expect(await checks(body.authorization_code)).toHaveLength(1);
    });

    it("refuses a code the provider issued to another customer (someone else's card), and saves nothing", async () => {
      const user = await cardHolder();
      const other = await cardHolder();
      const theirs = await paystack.authorizeUser(other.id);
      refusedOnCode(await post(cardAdd, cardBody({ authorization_code: theirs }), { token: user.accessToken }));
      expect(await cardRows(user.id)).toEqual([]);
      // the provider was asked about the caller's own customer
      const [asked] = await checks(theirs);
      expect(asked?.body).toMatchObject({ email: `${user.id}@customers.escrow.ng`, authorization_code: theirs });
    });

    it("saves a code the provider issued to the caller's customer, after asking it", async () => {
      const user = await cardHolder();
      const code = await paystack.authorizeUser(user.id);
      const card = expectOk(
        await post(cardAdd, cardBody({ authorization_code: code }), { token: user.accessToken }),
        201,
      );
      expect((await cardRows(user.id)).map((r) => [r.id, r.authorization_code])).toEqual([[card.id, code]]);
      const [asked] = await checks(code);
      expect(asked?.body).toEqual({
        authorization_code: code,
        email: `${user.id}@customers.escrow.ng`,
        amount: '10000',
        currency: 'NGN',
      });
    });

    it('answers 503 with Retry-After when the provider cannot be asked, and saves nothing', async () => {
      const user = await cardHolder();
      const code = await paystack.authorizeUser(user.id);
      await paystack.fail(
        { path: '/transaction/check_authorization', field: 'authorization_code', value: code },
        'unavailable',
      );
      const res = await post(cardAdd, cardBody({ authorization_code: code }), { token: user.accessToken });
      expectError(res, 503, 'provider_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await cardRows(user.id)).toEqual([]);
    });

    it('does not ask the provider below the identity floor (403 first)', async () => {
      const user = await signUp();
      const code = await paystack.authorizeUser(user.id);
      expectError(
        await post(cardAdd, cardBody({ authorization_code: code }), { token: user.accessToken }),
        403,
        'kyc_tier_required',
      );
      expect(await checks(code)).toEqual([]);
    });
  });

  it('answers 201 with exactly the saved card object and keeps the authorization code server-side', async () => {
    const user = await cardHolder();
    const body = cardBody({
      last4: '1234',
      brand: 'mastercard',
      exp_month: '07',
      exp_year: '2031',
      bank: 'Zenith Bank',
    });
    const res = await addCard(user, body);
    const card = expectOk(res, 201);
    expect(Object.keys(card).sort()).toEqual(CARD_KEYS);
    expect(card).toMatchObject({
      last4: '1234',
      brand: 'mastercard',
      exp_month: '07',
      exp_year: '2031',
      bank: 'Zenith Bank',
      signature: body.signature,
      is_default: true,
    });
    expect(card.id).toMatch(UUID);
    expect(card.created_at).toMatch(ISO);
    expectNoSecret(res, body.authorization_code);

    const rows = await cardRows(user.id);
    expect(rows).toEqual([{
      id: card.id,
      is_default: true,
      signature: body.signature,
      authorization_code: body.authorization_code,
    }]);
  });

  it('makes the first card the default and later cards not', async () => {
    const user = await cardHolder();
    const { card: first } = await addOk(user);
    const { card: second } = await addOk(user);
    const { card: third } = await addOk(user);
    expect([first.is_default, second.is_default, third.is_default]).toEqual([true, false, false]);
    const rows = await cardRows(user.id);
    expect(rows.filter((r) => r.is_default).map((r) => r.id)).toEqual([first.id]);
  });

  it('accepts a card without the optional bank (null)', async () => {
    const user = await cardHolder();
    const { bank: _bank, ...body } = cardBody();
    const res = await addCard(user, body);
    const card = expectOk(res, 201);
    expect(card.bank).toBeNull();
  });

  it.each(['408', '40812', '40a1', '', '    ', '４０８１'])('rejects last4 %j with 400 naming last4', async (last4) => {
    const user = await cardHolder();
    const res = await addCard(user, cardBody({ last4 }));
    expect(expectError(res, 400)).toEqual(['last4']);
    expect(await cardRows(user.id)).toEqual([]);
  });

  it('rejects last4 that is not a string', async () => {
    const user = await cardHolder();
    const res = await addCard(user, cardBody({ last4: 4081 }));
    expect(expectError(res, 400)).toEqual(['last4']);
  });

  it.each(['authorization_code', 'last4', 'brand', 'exp_month', 'exp_year', 'signature'])(
    'rejects a body without %s with 400 naming it',
    async (field) => {
      const user = await cardHolder();
      const body: Record<string, unknown> = cardBody();
      delete body[field];
      // @ts-expect-error a body missing a required field, on purpose
      const res = await addCard(user, body);
      expect(expectError(res, 400)).toEqual([field]);
      expect(res.body.details[0]!.message).toMatch(/required/);
      expect(await cardRows(user.id)).toEqual([]);
    },
  );

  it.each(['authorization_code', 'brand', 'signature'])('rejects a blank %s', async (field) => {
    const user = await cardHolder();
    const res = await addCard(user, cardBody({ [field]: '   ' }));
    expect(expectError(res, 400)).toEqual([field]);
  });

  it.each([
    ['exp_month', '13'],
    ['exp_month', '0'],
    ['exp_month', 'ab'],
    ['exp_year', '203'],
    ['exp_year', '20300'],
    ['exp_year', 'year'],
  ])('rejects %s = %j', async (field, value) => {
    const user = await cardHolder();
    const res = await addCard(user, cardBody({ [field]: value }));
    expect(expectError(res, 400)).toEqual([field]);
  });

  it('rejects an unknown field with 400 naming it, and an empty or non-JSON body', async () => {
    const user = await cardHolder();
    // @ts-expect-error an unknown field, on purpose
    const unknown = await addCard(user, { ...cardBody(), cvv: '123' });
    expect(expectError(unknown, 400)).toEqual(['cvv']);
    // @ts-expect-error an empty body, on purpose
    const empty = await addCard(user, {});
    expect(expectError(empty, 400)).toEqual([
      'authorization_code',
      'brand',
      'exp_month',
      'exp_year',
      'last4',
      'signature',
    ]);
    const garbage = await postRaw(cardAdd, '{not json', {
      token: user.accessToken,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(garbage, 400);
    expect(await cardRows(user.id)).toEqual([]);
  });

  it('needs a bearer token', async () => {
    const res = await post(cardAdd, cardBody());
    expectError(res, 401);
  });

  it('deduplicates by signature: 200 with the same id, one row, refreshed details and authorization', async () => {
    const user = await cardHolder();
    const { card: first, body } = await addOk(user, { exp_year: '2029' });
    const { card: other } = await addOk(user);
    const again = { ...body, authorization_code: `AUTH_new_${rand()}`, exp_year: '2033' };
    const res = await addCard(user, again);
    const card = expectOk(res, 200);
    expectNoSecret(res, body.authorization_code as string, again.authorization_code);
    expect(card.id).toBe(first.id);
    expect(card.exp_year).toBe('2033');
    expect(card.is_default).toBe(true); // stays the default
    expect(Object.keys(card).sort()).toEqual(CARD_KEYS);

    const rows = await cardRows(user.id);
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.id === first.id)?.authorization_code).toBe(again.authorization_code);
    expect(rows.find((r) => r.id === other.id)?.is_default).toBe(false);
  });

  it('keeps signatures per user: the same signature for another user is another card', async () => {
    const [a, b] = await Promise.all([cardHolder(), cardHolder()]);
    const signature = `SIG_shared_${rand()}`;
    const { card: ca } = await addOk(a, { signature });
    const { card: cb } = await addOk(b, { signature });
    expect(cb.id).not.toBe(ca.id);
    expect(cb.is_default).toBe(true);
    expect(await cardRows(a.id)).toHaveLength(1);
    expect(await cardRows(b.id)).toHaveLength(1);
  });

  it('10 concurrent card-adds of the same signature leave exactly one row', async () => {
    const user = await cardHolder();
    const signature = `SIG_race_${rand()}`;
    const bodies = Array.from({ length: 10 }, () => cardBody({ signature }));
    const results = await Promise.all(bodies.map((b) => addCard(user, b)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(results.map((r) => r.body))).toEqual([
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      200,
      201,
    ]);
    const ids = new Set(results.map((r) => r.body.data.id));
    expect(ids.size).toBe(1);
    for (const r of results) expectNoSecret(r, ...bodies.map((b) => b.authorization_code));
    const rows = await cardRows(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.is_default).toBe(true);
    expect(bodies.map((b) => b.authorization_code)).toContain(rows[0]?.authorization_code);
  });

  it('10 concurrent card-adds of different cards leave 10 rows and exactly one default', async () => {
    const user = await cardHolder();
    const results = await Promise.all(Array.from({ length: 10 }, () => addCard(user, cardBody())));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    const rows = await cardRows(user.id);
    expect(rows).toHaveLength(10);
    expect(rows.filter((r) => r.is_default)).toHaveLength(1);
    expect(results.filter((r) => r.body.data.is_default)).toHaveLength(1);
  });

  it('replays the first answer for the same Idempotency-Key and body', async () => {
    const user = await cardHolder();
    const body = cardBody();
    const key = randomUUID();
    const first = await addCard(user, body, { 'Idempotency-Key': key });
    const second = await addCard(user, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expectNoSecret(second, body.authorization_code);
    const other = await addCard(user, cardBody(), { 'Idempotency-Key': key });
    expectError(other, 409);
    expect(await cardRows(user.id)).toHaveLength(1);
  });
});

// ---- card-list -----------------------------------------------------------------------------

describe('card-list', () => {
  it('is empty for a new user', async () => {
    const user = await signUp();
    expect(expectOk(await listCards(user))).toEqual([]);
  });

  it('lists the default first, then newest first, each exactly the saved card object', async () => {
    const user = await cardHolder();
    const added = [];
    for (let i = 0; i < 4; i++) added.push((await addOk(user)).card);
    const res = await listCards(user);
    const data = expectOk(res) as Record<string, unknown>[];
    expect(data.map((c) => c.id)).toEqual([added[0]!.id, added[3]!.id, added[2]!.id, added[1]!.id]);
    for (const c of data) expect(Object.keys(c).sort()).toEqual(CARD_KEYS);
    expect(data).toEqual([added[0], added[3], added[2], added[1]]);
    expectNoSecret(res);
    // the stored codes never leak through the list
    for (const r of await cardRows(user.id)) expect(JSON.stringify(res.body)).not.toContain(r.authorization_code);
  });

  it("never shows another user's cards", async () => {
    const [a, b] = await Promise.all([cardHolder(), cardHolder()]);
    const { card: ca } = await addOk(a);
    const { card: cb } = await addOk(b);
    expect((await listIds(a)).map((c) => c.id)).toEqual([ca.id]);
    expect((await listIds(b)).map((c) => c.id)).toEqual([cb.id]);
  });

  it('takes no query parameters', async () => {
    const user = await signUp();
    // @ts-expect-error card-list takes no query: one, on purpose
    const res = await get(cardList, { token: user.accessToken, query: { limit: 5 } });
    expect(expectError(res, 400)).toEqual(['limit']);
  });
});

// ---- card-set-default ----------------------------------------------------------------------

describe('card-set-default', () => {
  it('moves the default: exactly one default, the list reorders', async () => {
    const user = await cardHolder();
    const a = (await addOk(user)).card;
    const b = (await addOk(user)).card;
    const c = (await addOk(user)).card;

    const res = await setDefault(user, b.id);
    const card = expectOk(res);
    expect(Object.keys(card).sort()).toEqual(CARD_KEYS);
    expect(card).toMatchObject({ id: b.id, is_default: true, signature: b.signature });
    expectNoSecret(res);
    for (const r of await cardRows(user.id)) expect(JSON.stringify(res.body)).not.toContain(r.authorization_code);

    expect(await listIds(user)).toEqual([
      { id: b.id, is_default: true },
      { id: c.id, is_default: false },
      { id: a.id, is_default: false },
    ]);
    const rows = await cardRows(user.id);
    expect(rows.filter((r) => r.is_default).map((r) => r.id)).toEqual([b.id]);

    // setting the current default again changes nothing
    expectOk(await setDefault(user, b.id));
    expect((await cardRows(user.id)).filter((r) => r.is_default).map((r) => r.id)).toEqual([b.id]);
  });

  it('concurrent set-defaults leave exactly one default', async () => {
    const user = await cardHolder();
    const cards = [];
    for (let i = 0; i < 5; i++) cards.push((await addOk(user)).card);
    const results = await Promise.all(cards.flatMap((c) => [setDefault(user, c.id), setDefault(user, c.id)]));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect((await cardRows(user.id)).filter((r) => r.is_default)).toHaveLength(1);
  });

  it("answers 404 for another user's card or an unknown id, and changes nothing", async () => {
    const [owner, intruder] = await Promise.all([cardHolder(), cardHolder()]);
    const mine = (await addOk(intruder)).card;
    const x = (await addOk(owner)).card;
    const y = (await addOk(owner)).card;
    const before = await cardRows(owner.id);

    const foreignDefault = await setDefault(intruder, y.id);
    expect(expectError(foreignDefault, 404)).toEqual(['card_id']);
    expect(foreignDefault.body).toMatchObject({ code: 'card_not_found' });
    expectError(await setDefault(intruder, randomUUID()), 404);
    expect(await cardRows(owner.id)).toEqual(before);
    expect((await cardRows(intruder.id)).map((r) => [r.id, r.is_default])).toEqual([[mine.id, true]]);
    expect(before.find((r) => r.id === x.id)?.is_default).toBe(true);
  });

  it('rejects a malformed or missing card_id with 400', async () => {
    const user = await signUp();
    expect(expectError(await setDefault(user, 'not-a-uuid'), 400)).toEqual(['card_id']);
    // @ts-expect-error a number, on purpose
    expect(expectError(await setDefault(user, 42), 400)).toEqual(['card_id']);
    // @ts-expect-error a body missing its field, on purpose
    expect(expectError(await post(cardSetDefault, {}, { token: user.accessToken }), 400)).toEqual(['card_id']);
    expect(
      expectError(
        // @ts-expect-error an unknown field, on purpose
        await post(cardSetDefault, { card_id: randomUUID(), extra: 1 }, { token: user.accessToken }),
        400,
      ),
    ).toEqual(['extra']);
  });
});

// ---- card-remove ---------------------------------------------------------------------------

describe('card-remove', () => {
  it('removing the default makes the newest remaining card the default', async () => {
    const user = await cardHolder();
    const a = (await addOk(user)).card;
    const b = (await addOk(user)).card;
    const c = (await addOk(user)).card;
    const d = (await addOk(user)).card;
    expectOk(await setDefault(user, b.id));

    const res = await removeCard(user, b.id);
    expect(expectOk(res)).toEqual({ removed: true, card_id: b.id });
    expect(await listIds(user)).toEqual([
      { id: d.id, is_default: true },
      { id: c.id, is_default: false },
      { id: a.id, is_default: false },
    ]);
    // the authorization went with the card
    const [auth] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from private.card_authorizations where card_id = ${b.id}`;
    expect(auth?.n).toBe(0);

    // removing a card that is not the default keeps the default where it is
    expectOk(await removeCard(user, a.id));
    expect(await listIds(user)).toEqual([
      { id: d.id, is_default: true },
      { id: c.id, is_default: false },
    ]);

    // removing the last default leaves the last card as default; removing it leaves none
    expectOk(await removeCard(user, d.id));
    expect(await listIds(user)).toEqual([{ id: c.id, is_default: true }]);
    expectOk(await removeCard(user, c.id));
    expect(await listIds(user)).toEqual([]);

    // a card added afterwards is the default again
    const e = (await addOk(user)).card;
    expect(e.is_default).toBe(true);
  });

  it('a removed card answers 404 the second time', async () => {
    const user = await cardHolder();
    const a = (await addOk(user)).card;
    expectOk(await removeCard(user, a.id));
    expectError(await removeCard(user, a.id), 404);
  });

  it("answers 404 for another user's card or an unknown id, and changes nothing", async () => {
    const [owner, intruder] = await Promise.all([cardHolder(), cardHolder()]);
    await addOk(intruder);
    const x = (await addOk(owner)).card;
    await addOk(owner);
    const before = await cardRows(owner.id);
    const intruderBefore = await cardRows(intruder.id);

    const foreign = await removeCard(intruder, x.id);
    expect(expectError(foreign, 404)).toEqual(['card_id']);
    expect(foreign.body).toMatchObject({ code: 'card_not_found', error: 'Card not found' });
    const unknown = await removeCard(intruder, randomUUID());
    expectError(unknown, 404);
    // the two 404s look alike: nothing reveals that the foreign card exists
    expect(foreign.body.error).toBe(unknown.body.error);

    expect(await cardRows(owner.id)).toEqual(before);
    expect(await cardRows(intruder.id)).toEqual(intruderBefore);
  });

  it('rejects a malformed card_id with 400', async () => {
    const user = await cardHolder();
    const a = (await addOk(user)).card;
    expect(expectError(await removeCard(user, 'abc'), 400)).toEqual(['card_id']);
    expect(expectError(await removeCard(user, `${a.id}x`), 400)).toEqual(['card_id']);
    // @ts-expect-error null, on purpose
    expect(expectError(await removeCard(user, null), 400)).toEqual(['card_id']);
    expect(await cardRows(user.id)).toHaveLength(1);
  });

  it('answers 405 to GET', async () => {
    const user = await signUp();
    const res = await get(cardRemove, { token: user.accessToken });
    expectError(res, 405);
    expect(res.headers.get('allow')).toMatch(/POST/);
  });
});
