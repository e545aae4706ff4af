// Payout accounts through the real HTTP server and the Paystack fake: payout-add (resolve the
// account name at the bank, create a transfer recipient), payout-list, payout-set-default,
// payout-remove. Account numbers leave the service masked only.
import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResult, type BodyOf, expectError, expectOk, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import payoutList from '../../supabase/functions/payout-list/handler.ts';
import payoutRemove from '../../supabase/functions/payout-remove/handler.ts';
import payoutSetDefault from '../../supabase/functions/payout-set-default/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const BANK_NAME_HELD = 'OBI ADA CHIOMA';
const PAYOUT_KEYS = ['account_name', 'account_number', 'bank_code', 'bank_name', 'id', 'is_default', 'verified'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A random account number of the given length (the fake's state is shared by every test). */
const accountNumber = (length = 10) =>
  Array.from({ length }, (_, i) => String(randomInt(i === 0 ? 1 : 0, 10))).join('');
const masked = (n: string) => `${'*'.repeat(n.length - 4)}${n.slice(-4)}`;

/** An account the fake's /bank/resolve knows, held in BANK_NAME_HELD's name. */
async function knownAccount(opts: { bank_code?: string; length?: number; name?: string } = {}) {
  const bank_code = opts.bank_code ?? '058';
  const number = accountNumber(opts.length ?? 10);
  await paystack.registerAccount(bank_code, number, opts.name ?? BANK_NAME_HELD);
  return { bank_code, account_number: number };
}

const payoutBody = (acct: { bank_code: string; account_number: string }, over: Record<string, unknown> = {}) => ({
  bank_code: acct.bank_code,
  bank_name: 'Guaranty Trust Bank',
  account_number: acct.account_number,
  account_name: 'Ada Obi',
  ...over,
});

const addPayout = (user: TestUser, body: BodyOf<typeof payoutAdd>) =>
  post(payoutAdd, body, { token: user.accessToken });
const listPayouts = (user: TestUser) => get(payoutList, { token: user.accessToken });
const setDefault = (user: TestUser, id: string) =>
  post(payoutSetDefault, { payout_account_id: id }, { token: user.accessToken });
const removePayout = (user: TestUser, id: string) =>
  post(payoutRemove, { payout_account_id: id }, { token: user.accessToken });

/** Every spec field is there (extra fields such as created_at are allowed), the number masked. */
function expectPayoutObject(p: Record<string, unknown>, fullNumber: string) {
  for (const k of PAYOUT_KEYS) expect(p).toHaveProperty(k);
  expect(p.id).toMatch(UUID);
  expect(p.account_number).toBe(masked(fullNumber));
  expect(typeof p.is_default).toBe('boolean');
  expect(typeof p.verified).toBe('boolean');
  expect(p).not.toHaveProperty('provider_recipient_code');
  expect(p).not.toHaveProperty('user_id');
}

/** The full account number appears nowhere in the response. */
function expectNoFullNumber(res: ApiResult, ...numbers: string[]) {
  const text = JSON.stringify(res.body);
  for (const n of numbers) expect(text).not.toContain(n);
}

async function addOk(user: TestUser, opts: { bank_code?: string } = {}) {
  const acct = await knownAccount(opts);
  const res = await addPayout(user, payoutBody(acct));
  const p = expectOk(res, 201);
  expectPayoutObject(p, acct.account_number);
  expectNoFullNumber(res, acct.account_number);
  return { p, acct };
}

interface PayoutRowDb {
  id: string;
  bank_code: string;
  account_number: string;
  account_name: string;
  is_default: boolean;
  verified: boolean;
  provider_recipient_code: string | null;
}

const payoutRows = (userId: string) =>
  testDb()<PayoutRowDb[]>`
    select id, bank_code, account_number, account_name, is_default, verified, provider_recipient_code
      from public.payout_accounts where user_id = ${userId} order by created_at, id`;

async function listIds(user: TestUser) {
  const res = await listPayouts(user);
  const data = expectOk(res) as { id: string; is_default: boolean }[];
  return data.map((p) => ({ id: p.id, is_default: p.is_default }));
}

async function recipientRequestsFor(number: string) {
  return (await paystack.requests('/transferrecipient')).filter((r) => r.body?.account_number === number);
}

// ---- payout-add: verification at the bank ----------------------------------------------------

describe('payout-add', () => {
  describe('resolves the account at the bank', () => {
    it('accepts a matching name in another order and case: 201, verified, the name as the bank holds it', async () => {
      const user = await signUp();
      const acct = await knownAccount();
      const res = await addPayout(user, payoutBody(acct, { account_name: 'Ada Obi' }));
      const p = expectOk(res, 201);
      expectPayoutObject(p, acct.account_number);
      expectNoFullNumber(res, acct.account_number);
      expect(p).toMatchObject({
        bank_code: acct.bank_code,
        bank_name: 'Guaranty Trust Bank',
        account_number: `******${acct.account_number.slice(-4)}`,
        account_name: BANK_NAME_HELD,
        is_default: true,
        verified: true,
      });

      // a transfer recipient was created at the provider and its code kept server-side
      const reqs = await recipientRequestsFor(acct.account_number);
      expect(reqs).toHaveLength(1);
      expect(reqs[0]?.body).toMatchObject({
        type: 'nuban',
        bank_code: acct.bank_code,
        name: BANK_NAME_HELD,
        currency: 'NGN',
      });
      const rows = await payoutRows(user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        id: p.id,
        account_number: acct.account_number,
        account_name: BANK_NAME_HELD,
        verified: true,
        is_default: true,
      });
      expect(rows[0]?.provider_recipient_code).toMatch(/^RCP_/);
    });

    it.each(['ada obi', 'CHIOMA OBI ADA', 'Obi,  Ada-Chioma', 'Chioma Ada'])(
      'accepts %j as the same person',
      async (name) => {
        const user = await signUp();
        const acct = await knownAccount();
        const p = expectOk(await addPayout(user, payoutBody(acct, { account_name: name })), 201);
        expect(p).toMatchObject({ verified: true, account_name: BANK_NAME_HELD });
      },
    );

    it.each(['Emeka Nwosu', 'Ada Nwosu', 'Ngozi'])(
      'rejects the non-matching name %j with 409 on account_name and saves nothing',
      async (name) => {
        const user = await signUp();
        const acct = await knownAccount();
        const res = await addPayout(user, payoutBody(acct, { account_name: name }));
        expect(expectError(res, 409)).toEqual(['account_name']);
        expect(res.body).toMatchObject({ code: 'payout_account_name_mismatch' });
        expectNoFullNumber(res, acct.account_number);
        expect(await payoutRows(user.id)).toEqual([]);
        expect(await recipientRequestsFor(acct.account_number)).toEqual([]);
      },
    );

    it('rejects an account the bank does not know with 409 on account_number and saves nothing', async () => {
      const user = await signUp();
      const number = accountNumber();
      const res = await addPayout(user, payoutBody({ bank_code: '058', account_number: number }));
      expect(expectError(res, 409)).toEqual(['account_number']);
      expect(res.body).toMatchObject({ code: 'payout_account_unknown_at_bank' });
      expectNoFullNumber(res, number);
      expect(await payoutRows(user.id)).toEqual([]);
      expect(await recipientRequestsFor(number)).toEqual([]);
    });

    it('an account known at one bank is unknown at another', async () => {
      const user = await signUp();
      const acct = await knownAccount({ bank_code: '058' });
      const res = await addPayout(user, payoutBody({ ...acct, bank_code: '044' }));
      expect(expectError(res, 409)).toEqual(['account_number']);
      expect(res.body.code).toBe('payout_account_unknown_at_bank');
    });

    it('keeps the account unverified, under the given name, when the provider cannot be asked', async () => {
      const user = await signUp();
      const number = accountNumber();
      await paystack.fail({ path: '/bank/resolve', field: 'account_number', value: number }, 'unavailable');
      const res = await addPayout(
        user,
        payoutBody({ bank_code: '058', account_number: number }, { account_name: '  Ada Obi ' }),
      );
      const p = expectOk(res, 201);
      expectPayoutObject(p, number);
      expectNoFullNumber(res, number);
      expect(p).toMatchObject({
        verified: false,
        account_name: 'Ada Obi',
        is_default: true,
        account_number: `******${number.slice(-4)}`,
      });
      const rows = await payoutRows(user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ verified: false, account_number: number });
      expect(rows[0]?.provider_recipient_code).toMatch(/^RCP_/);
    });

    it('keeps the account without a recipient code when creating the recipient is unavailable', async () => {
      const user = await signUp();
      const acct = await knownAccount();
      await paystack.fail(
        { path: '/transferrecipient', field: 'account_number', value: acct.account_number },
        'unavailable',
      );
      const p = expectOk(await addPayout(user, payoutBody(acct)), 201);
      expect(p.verified).toBe(true);
      const rows = await payoutRows(user.id);
      expect(rows[0]?.provider_recipient_code).toBeNull();
    });

    it.each([10, 11, 12, 20])(
      'masks a %i-digit account number as asterisks and its last four digits',
      async (length) => {
        const user = await signUp();
        const acct = await knownAccount({ length });
        const res = await addPayout(user, payoutBody(acct));
        const p = expectOk(res, 201);
        expect(p.account_number).toBe(`${'*'.repeat(length - 4)}${acct.account_number.slice(-4)}`);
        expectNoFullNumber(res, acct.account_number);
        const list = await listPayouts(user);
        expect(expectOk(list)[0]!.account_number).toBe(p.account_number);
        expectNoFullNumber(list, acct.account_number);
      },
    );
  });

  // ---- payout-add: validation and duplicates ----------------------------------------------------

  describe('validation', () => {
    it.each([
      ['9 digits', '012345678'],
      ['letters', '01234567ab'],
      ['spaces', '0123 45678'],
      ['21 digits', '012345678901234567890'],
      ['empty', ''],
    ])('rejects an account number of %s with 400 on account_number', async (_label, number) => {
      const user = await signUp();
      const res = await addPayout(user, payoutBody({ bank_code: '058', account_number: number }));
      expect([...new Set(expectError(res, 400))]).toEqual(['account_number']);
      expect(await payoutRows(user.id)).toEqual([]);
    });

    it('rejects a numeric account number (must be a string)', async () => {
      const user = await signUp();
      const res = await addPayout(user, {
        ...payoutBody({ bank_code: '058', account_number: '1234567890' }),
        // @ts-expect-error a number for the account number, on purpose
        account_number: 1234567890,
      });
      expect(expectError(res, 400)).toEqual(['account_number']);
    });

    it('accepts exactly 10 digits, including leading zeros', async () => {
      const user = await signUp();
      const number = `00${accountNumber(8)}`;
      await paystack.registerAccount('058', number, BANK_NAME_HELD);
      const p = expectOk(await addPayout(user, payoutBody({ bank_code: '058', account_number: number })), 201);
      expect(p.account_number).toBe(`******${number.slice(-4)}`);
      expect((await payoutRows(user.id))[0]?.account_number).toBe(number);
    });

    it.each(['bank_code', 'bank_name', 'account_number', 'account_name'])(
      'rejects a body without %s with 400 naming it',
      async (field) => {
        const user = await signUp();
        const body: Record<string, unknown> = payoutBody(await knownAccount());
        delete body[field];
        // @ts-expect-error a body missing a required field, on purpose
        const res = await addPayout(user, body);
        expect(expectError(res, 400)).toEqual([field]);
        expect(await payoutRows(user.id)).toEqual([]);
      },
    );

    it('rejects blank names, a malformed bank code and unknown fields', async () => {
      const user = await signUp();
      const acct = await knownAccount();
      expect(expectError(await addPayout(user, payoutBody(acct, { bank_name: '  ' })), 400)).toEqual(['bank_name']);
      expect(expectError(await addPayout(user, payoutBody(acct, { account_name: '' })), 400)).toEqual(['account_name']);
      expect(expectError(await addPayout(user, payoutBody(acct, { bank_code: '0-5' })), 400)).toEqual(['bank_code']);
      expect(expectError(await addPayout(user, payoutBody(acct, { bvn: '12345678901' })), 400)).toEqual(['bvn']);
      expect(await payoutRows(user.id)).toEqual([]);
    });

    it('answers 409 to the same bank and number again, keeping one row', async () => {
      const user = await signUp();
      const { p, acct } = await addOk(user);
      const res = await addPayout(user, payoutBody(acct, { account_name: 'Chioma Obi' }));
      expect(expectError(res, 409)).toEqual(['account_number']);
      expect(res.body).toMatchObject({
        code: 'payout_account_duplicate',
        error: 'This payout account is already saved',
      });
      expectNoFullNumber(res, acct.account_number);
      const rows = await payoutRows(user.id);
      expect(rows.map((r) => r.id)).toEqual([p.id]);
    });

    it('concurrent adds of the same account: one 201, the rest 409, one row', async () => {
      const user = await signUp();
      const acct = await knownAccount();
      const results = await Promise.all(Array.from({ length: 5 }, () => addPayout(user, payoutBody(acct))));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      const rows = await payoutRows(user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.is_default).toBe(true);
    });

    it('the same number at another bank, or for another user, is another account', async () => {
      const [a, b] = await Promise.all([signUp(), signUp()]);
      const acct = await knownAccount({ bank_code: '058' });
      await paystack.registerAccount('044', acct.account_number, BANK_NAME_HELD);
      expectOk(await addPayout(a, payoutBody(acct)), 201);
      const other = expectOk(
        await addPayout(a, payoutBody({ ...acct, bank_code: '044' }, { bank_name: 'Access Bank' })),
        201,
      );
      expect(other.is_default).toBe(false);
      const forB = expectOk(await addPayout(b, payoutBody(acct)), 201);
      expect(forB.is_default).toBe(true);
      expect(await payoutRows(a.id)).toHaveLength(2);
      expect(await payoutRows(b.id)).toHaveLength(1);
    });
  });
});

// ---- payout-list, payout-set-default, payout-remove --------------------------------------------

describe('payout-list', () => {
  it('is empty for a new user', async () => {
    const user = await signUp();
    expect(expectOk(await listPayouts(user))).toEqual([]);
  });

  it("lists the default first, then newest first, masked, and only the caller's accounts", async () => {
    const [user, other] = await Promise.all([signUp(), signUp()]);
    const added: Awaited<ReturnType<typeof addOk>>[] = [];
    for (let i = 0; i < 3; i++) added.push(await addOk(user));
    const foreign = await addOk(other);

    const res = await listPayouts(user);
    const data = expectOk(res) as Record<string, unknown>[];
    expect(data.map((p) => p.id)).toEqual([added[0]!.p.id, added[2]!.p.id, added[1]!.p.id]);
    expect(data.map((p) => p.is_default)).toEqual([true, false, false]);
    data.forEach((p, i) => expectPayoutObject(p, [added[0], added[2], added[1]][i]!.acct.account_number));
    expectNoFullNumber(res, ...added.map((a) => a.acct.account_number));
    expect(data.map((p) => p.id)).not.toContain(foreign.p.id);
  });
});

describe('payout-set-default', () => {
  it('moves the default: exactly one default, the list reorders', async () => {
    const user = await signUp();
    const a = await addOk(user);
    const b = await addOk(user);
    const c = await addOk(user);

    const res = await setDefault(user, b.p.id);
    const p = expectOk(res);
    expectPayoutObject(p, b.acct.account_number);
    expectNoFullNumber(res, b.acct.account_number);
    expect(p).toMatchObject({ id: b.p.id, is_default: true });

    expect(await listIds(user)).toEqual([
      { id: b.p.id, is_default: true },
      { id: c.p.id, is_default: false },
      { id: a.p.id, is_default: false },
    ]);
    expect((await payoutRows(user.id)).filter((r) => r.is_default).map((r) => r.id)).toEqual([b.p.id]);
  });

  it('concurrent set-defaults leave exactly one default', async () => {
    const user = await signUp();
    const added: Awaited<ReturnType<typeof addOk>>[] = [];
    for (let i = 0; i < 4; i++) added.push(await addOk(user));
    const results = await Promise.all(added.flatMap((a) => [setDefault(user, a.p.id), setDefault(user, a.p.id)]));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect((await payoutRows(user.id)).filter((r) => r.is_default)).toHaveLength(1);
  });

  it("answers 404 for another user's account or an unknown id, and changes nothing", async () => {
    const [owner, intruder] = await Promise.all([signUp(), signUp()]);
    await addOk(intruder);
    await addOk(owner);
    const y = await addOk(owner);
    const before = await payoutRows(owner.id);
    const intruderBefore = await payoutRows(intruder.id);

    const foreign = await setDefault(intruder, y.p.id);
    expect(expectError(foreign, 404)).toEqual(['payout_account_id']);
    expect(foreign.body).toMatchObject({ code: 'payout_account_not_found' });
    expectNoFullNumber(foreign, y.acct.account_number);
    expectError(await setDefault(intruder, randomUUID()), 404);
    expect(await payoutRows(owner.id)).toEqual(before);
    expect(await payoutRows(intruder.id)).toEqual(intruderBefore);
  });

  it('rejects a malformed or missing payout_account_id with 400', async () => {
    const user = await signUp();
    expect(expectError(await setDefault(user, 'nope'), 400)).toEqual(['payout_account_id']);
    // @ts-expect-error a body missing its field, on purpose
    expect(expectError(await post(payoutSetDefault, {}, { token: user.accessToken }), 400)).toEqual([
      'payout_account_id',
    ]);
    // @ts-expect-error another endpoint's field, on purpose
    expect(expectError(await post(payoutSetDefault, { card_id: randomUUID() }, { token: user.accessToken }), 400))
      .toEqual([
        'card_id',
        'payout_account_id',
      ]);
  });
});

describe('payout-remove', () => {
  it('removing the default makes the newest remaining account the default', async () => {
    const user = await signUp();
    const a = await addOk(user);
    const b = await addOk(user);
    const c = await addOk(user);
    const d = await addOk(user);
    expectOk(await setDefault(user, b.p.id));

    expect(expectOk(await removePayout(user, b.p.id))).toEqual({ removed: true, payout_account_id: b.p.id });
    expect(await listIds(user)).toEqual([
      { id: d.p.id, is_default: true },
      { id: c.p.id, is_default: false },
      { id: a.p.id, is_default: false },
    ]);

    expectOk(await removePayout(user, a.p.id)); // not the default: the default stays
    expect(await listIds(user)).toEqual([
      { id: d.p.id, is_default: true },
      { id: c.p.id, is_default: false },
    ]);
    expectOk(await removePayout(user, d.p.id));
    expect(await listIds(user)).toEqual([{ id: c.p.id, is_default: true }]);
    expectOk(await removePayout(user, c.p.id));
    expect(await listIds(user)).toEqual([]);
    expectError(await removePayout(user, c.p.id), 404);

    // the removed account can be added again, and is the default again
    const again = expectOk(await addPayout(user, payoutBody(a.acct)), 201);
    expect(again.is_default).toBe(true);
  });

  it("answers 404 for another user's account or an unknown id, and changes nothing", async () => {
    const [owner, intruder] = await Promise.all([signUp(), signUp()]);
    await addOk(intruder);
    const x = await addOk(owner);
    await addOk(owner);
    const before = await payoutRows(owner.id);
    const intruderBefore = await payoutRows(intruder.id);

    const foreign = await removePayout(intruder, x.p.id);
    expectError(foreign, 404);
    const unknown = await removePayout(intruder, randomUUID());
    expectError(unknown, 404);
    expect(foreign.body.error).toBe(unknown.body.error);
    expect(await payoutRows(owner.id)).toEqual(before);
    expect(await payoutRows(intruder.id)).toEqual(intruderBefore);
  });

  it('rejects a malformed payout_account_id with 400', async () => {
    const user = await signUp();
    await addOk(user);
    expect(expectError(await removePayout(user, '1234'), 400)).toEqual(['payout_account_id']);
    // @ts-expect-error a number for the id, on purpose
    expect(expectError(await removePayout(user, 7), 400)).toEqual(['payout_account_id']);
    expect(await payoutRows(user.id)).toHaveLength(1);
  });

  it('needs a bearer token', async () => {
    expectError(await post(payoutRemove, { payout_account_id: randomUUID() }), 401);
    expectError(await get(payoutList), 401);
  });
});
