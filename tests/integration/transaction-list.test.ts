// transaction-list through the real HTTP server, with transactions made the real way (card
// top-ups completed by the Paystack fake's charge.success, withdrawals settled by transfer
// webhooks) and, for the pagination edge cases, rows written straight into the test database.
// The users who top up and withdraw through the API are at tier 1: at tier 0 (phone only) the
// identity floor refuses both (tests/integration/kyc-floor.test.ts).
import { randomInt, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { micros } from '../support/time.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const TX_KEYS = [
  'amount',
  'category',
  'completed_at',
  'created_at',
  'currency',
  'description',
  'direction',
  'escrow_id',
  'id',
  'metadata',
  'milestone_id',
  'provider',
  'provider_charge_id',
  'provider_refund_id',
  'provider_transfer_id',
  'status',
  'type',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

type Query = Record<string, string | number | undefined>;
interface Tx {
  id: string;
  amount: number;
  created_at: string;
  [k: string]: unknown;
}

const list = (user: TestUser, query: Query = {}) => get(transactionList, { token: user.accessToken, query });

/** One page: {data, next_cursor} and nothing else. */
async function page(user: TestUser, query: Query = {}): Promise<{ data: Tx[]; next_cursor: string | null }> {
  const out = expectOk(await list(user, query));
  expect(Object.keys(out).sort()).toEqual(['data', 'next_cursor']);
  expect(Array.isArray(out.data)).toBe(true);
  if (out.data.length > 0) expect(out.next_cursor).toBe(out.data[out.data.length - 1]!.created_at);
  else expect(out.next_cursor).toBeNull();
  return out;
}

const ids = (rows: Tx[]) => rows.map((t) => t.id);

/** Walks every page with `before = next_cursor`, returning all rows in order. */
async function walk(user: TestUser, limit: number, query: Query = {}): Promise<{ rows: Tx[]; pages: number[] }> {
  const rows: Tx[] = [];
  const pages: number[] = [];
  let before: string | undefined;
  for (let i = 0; i < 200; i++) {
    const p = await page(user, { ...query, limit, before });
    pages.push(p.data.length);
    rows.push(...p.data);
    if (p.data.length < limit) return { rows, pages };
    before = p.next_cursor as string;
  }
  throw new Error('pagination did not end');
}

function expectStrictlyNewestFirst(rows: Tx[]) {
  for (let i = 1; i < rows.length; i++) {
    expect(
      micros(rows[i - 1]!.created_at) > micros(rows[i]!.created_at),
      `${rows[i - 1]!.created_at} > ${rows[i]!.created_at}`,
    ).toBe(true);
  }
}

/** A card top-up, completed by the provider's charge.success unless `complete` is false. */
async function topup(user: TestUser, amount: number, complete = true): Promise<string> {
  const res = await post(walletTopup, { amount }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const reference = res.body.data.reference as string;
  if (complete) {
    const d = await paystack.chargeSuccess(reference);
    expect(d.responses[0]?.status).toBe(200);
  }
  return reference;
}

async function addPayoutAccount(user: TestUser): Promise<string> {
  const number = `${randomInt(1, 10)}${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
  await paystack.registerAccount('058', number, 'OBI ADA');
  const res = await post(
    payoutAdd,
    { bank_code: '058', bank_name: 'Guaranty Trust Bank', account_number: number, account_name: 'Ada Obi' },
    { token: user.accessToken },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

async function withdraw(
  user: TestUser,
  amount: number,
  outcome: 'transfer.success' | 'transfer.failed',
): Promise<string> {
  const res = await post(walletWithdraw, { amount }, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id = res.body.data.id as string;
  const d = await paystack.transferOutcome(id, outcome);
  expect(d.responses[0]?.status).toBe(200);
  return id;
}

/** n succeeded deposits of 1..n naira for user, all given the same created_at, in one statement. */
async function bulkInsert(userId: string, n: number, createdAt = '2026-01-01T00:00:00Z') {
  await testDb()`
    insert into public.transactions (user_id, type, category, amount, direction, status, provider, completed_at, created_at)
    select ${userId}, 'virtual_account_deposit', 'deposit', 100 * g, 'in', 'succeeded', 'paystack', now(), ${createdAt}::timestamptz
      from generate_series(1, ${n}::int) g`;
}

// ---- shape, order and filters on transactions made through the API ---------------------------

describe('transaction-list', () => {
  describe('over real top-ups and withdrawals', () => {
    let user: TestUser;
    let other: TestUser;
    const made: Record<string, string> = {};
    let escrowId: string;
    let escrowTx: string;

    beforeAll(async () => {
      [user, other] = await Promise.all([signUp({ tier: 1 }), signUp({ tier: 1 })]);
      made.t1 = await topup(user, 1000);
      made.t2 = await topup(user, 2000.5);
      made.t3 = await topup(user, 3000, false); // stays pending
      await addPayoutAccount(user);
      made.w1 = await withdraw(user, 500, 'transfer.success');
      made.w2 = await withdraw(user, 250.25, 'transfer.failed');
      // an escrow movement: an escrow made by its SQL function, the movement written straight in
      // the database (no escrow endpoints yet)
      const [escrow] = await testDb()<{ escrow_id: string }[]>`
      select escrow_id from private.escrow_create(${user.id}, 'hiring', 'initiator', 'Logo design', '',
                                                  ${`+2348${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`},
                                                  1000000, 0, 0, 0, ${`hash-${randomUUID()}`})`;
      escrowId = escrow!.escrow_id;
      const [row] = await testDb()<{ id: string }[]>`
      insert into public.transactions (user_id, type, category, message, amount, direction, status, provider, escrow_id,
                                       completed_at)
      values (${user.id}, 'escrow_funding', 'escrow', '{"kind": "escrow_funding", "title": "Logo design"}',
              12345, 'out', 'succeeded', 'wallet', ${escrowId}, now())
      returning id`;
      escrowTx = row!.id;
      // someone else's movements, which must never show up
      made.o1 = await topup(other, 700);
      made.o2 = await topup(other, 800, false);
    });

    it('lists newest first, each a full Transaction object with the amount in naira', async () => {
      const { data, next_cursor } = await page(user);
      expect(ids(data)).toEqual([escrowTx, made.w2, made.w1, made.t3, made.t2, made.t1]);
      expectStrictlyNewestFirst(data);
      expect(next_cursor).toBe(data[5]!.created_at);
      for (const t of data) {
        expect(Object.keys(t).sort()).toEqual(TX_KEYS);
        expect(t.id).toMatch(UUID);
        expect(t.currency).toBe('NGN');
        expect(typeof t.description).toBe('string');
        expect(typeof t.metadata).toBe('object');
        expect(t.metadata).not.toBeNull();
        expect(t.created_at).toMatch(ISO);
        expect(t.milestone_id).toBeNull();
        expect(t.provider_refund_id).toBeNull();
        if (t.status === 'pending') expect(t.completed_at).toBeNull();
        else expect(t.completed_at).toMatch(ISO);
      }
      const byId = Object.fromEntries(data.map((t) => [t.id, t]));
      expect(byId[made.t1!]).toMatchObject({
        type: 'wallet_topup',
        category: 'deposit',
        direction: 'in',
        status: 'succeeded',
        amount: 1000,
        provider: 'paystack',
        escrow_id: null,
        provider_transfer_id: null,
      });
      expect(byId[made.t1!]!.provider_charge_id).toEqual(expect.any(String));
      expect(byId[made.t2!]).toMatchObject({ status: 'succeeded', amount: 2000.5 });
      expect(byId[made.t3!]).toMatchObject({ status: 'pending', amount: 3000, provider_charge_id: null });
      expect(byId[made.w1!]).toMatchObject({
        type: 'withdrawal',
        category: 'withdrawal',
        direction: 'out',
        status: 'succeeded',
        amount: 500,
        provider: 'paystack',
      });
      expect(byId[made.w1!]!.provider_transfer_id).toMatch(/^TRF_/);
      expect(byId[made.w2!]).toMatchObject({ type: 'withdrawal', status: 'failed', amount: 250.25 });
      expect(byId[escrowTx]).toMatchObject({
        type: 'escrow_funding',
        category: 'escrow',
        direction: 'out',
        amount: 123.45,
        escrow_id: escrowId,
        provider: 'wallet',
      });
      // the wallet agrees with the API movements: 1000 + 2000.50 - 500 (the failed withdrawal came
      // back); the raw escrow row above has no ledger posting
      const wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data).toMatchObject({ balance: 2500.5, pending_deposits: 3000, pending_withdrawals: 0 });
    });

    it.each([
      [{ category: 'deposit' }, ['t3', 't2', 't1']],
      [{ category: 'withdrawal' }, ['w2', 'w1']],
      [{ status: 'pending' }, ['t3']],
      [{ status: 'failed' }, ['w2']],
      [{ status: 'canceled' }, []],
      [{ status: 'succeeded', category: 'deposit' }, ['t2', 't1']],
      [{ status: 'succeeded', category: 'withdrawal' }, ['w1']],
      [{ status: 'pending', category: 'withdrawal' }, []],
    ] as [Query, string[]][])('filters %j', async (query, expected) => {
      const { data } = await page(user, query);
      expect(ids(data)).toEqual(expected.map((k) => made[k]));
      for (const t of data) {
        if (query.category) expect(t.category).toBe(query.category);
        if (query.status) expect(t.status).toBe(query.status);
      }
    });

    it('filters by category escrow and by escrow_id; an unknown escrow_id is an empty list', async () => {
      expect(ids((await page(user, { category: 'escrow' })).data)).toEqual([escrowTx]);
      expect(ids((await page(user, { escrow_id: escrowId })).data)).toEqual([escrowTx]);
      expect(ids((await page(user, { escrow_id: escrowId, status: 'pending' })).data)).toEqual([]);
      expect(await page(user, { escrow_id: randomUUID() })).toEqual({ data: [], next_cursor: null });
      // another user asking for that escrow's movements sees nothing
      expect(await page(other, { escrow_id: escrowId })).toEqual({ data: [], next_cursor: null });
    });

    it("never shows another user's transactions", async () => {
      const mine = await walk(user, 100);
      const theirs = await walk(other, 100);
      expect(ids(theirs.rows)).toEqual([made.o2, made.o1]);
      expect(ids(mine.rows)).not.toContain(made.o1);
      expect(ids(mine.rows)).not.toContain(made.o2);
      for (
        const q of [{ status: 'pending' }, { category: 'deposit' }, { category: 'withdrawal' }, { category: 'escrow' }]
      ) {
        expect(ids((await page(other, q)).data).every((id) => id === made.o1 || id === made.o2)).toBe(true);
      }
    });

    it('pages with before = next_cursor (exclusive) and limit', async () => {
      const first = await page(user, { limit: 2 });
      expect(ids(first.data)).toEqual([escrowTx, made.w2]);
      const second = await page(user, { limit: 2, before: first.next_cursor! });
      expect(ids(second.data)).toEqual([made.w1, made.t3]);
      const third = await page(user, { limit: 2, before: second.next_cursor! });
      expect(ids(third.data)).toEqual([made.t2, made.t1]);
      const fourth = await page(user, { limit: 2, before: third.next_cursor! });
      expect(fourth).toEqual({ data: [], next_cursor: null });
      // filters and the cursor together
      const deposits = await page(user, { category: 'deposit', limit: 1, before: first.next_cursor! });
      expect(ids(deposits.data)).toEqual([made.t3]);
      const older = await page(user, { category: 'deposit', before: deposits.next_cursor! });
      expect(ids(older.data)).toEqual([made.t2, made.t1]);
    });

    it('before in the far future lists everything; before the first row lists nothing', async () => {
      expect(ids((await page(user, { before: '2999-12-31T23:59:59.999999Z' })).data)).toHaveLength(6);
      expect(await page(user, { before: '2000-01-01T00:00:00Z' })).toEqual({ data: [], next_cursor: null });
    });
  });

  // ---- query validation ------------------------------------------------------------------------

  describe('query validation', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await signUp();
    });

    it.each(['0', '101', '-1', 'abc', '1.5', '', '1e2', ' 5'])(
      'rejects limit=%j with 400 naming limit',
      async (limit) => {
        expect(expectError(await list(user, { limit }), 400)).toEqual(['limit']);
      },
    );

    it('accepts limit 1 and 100', async () => {
      expect(expectOk(await list(user, { limit: 1 }))).toEqual({ data: [], next_cursor: null });
      expect(expectOk(await list(user, { limit: 100 }))).toEqual({ data: [], next_cursor: null });
    });

    it.each([
      'garbage',
      '2026-01-01',
      '1735689600',
      '2026-02-30T00:00:00Z',
      '2026-01-01 00:00:00',
      '2026-01-01T00:00:00',
    ])(
      'rejects before=%j with 400 naming before',
      async (before) => {
        expect(expectError(await list(user, { before }), 400)).toEqual(['before']);
      },
    );

    it('accepts ISO timestamps with an offset or microseconds', async () => {
      for (const before of ['2026-01-01T00:00:00Z', '2026-01-01T01:00:00+01:00', '2026-01-01T00:00:00.123456Z']) {
        expect((await list(user, { before })).status).toBe(200);
      }
    });

    it.each([
      '0000-01-01T00:00:00Z',
      '0000-12-31T23:00:00-01:00',
      '2026-01-01T00:00:00+16:00',
      '2026-01-01T00:00:00-23:59',
    ])(
      'answers 400 (not 500) to %j, an ISO timestamp Postgres cannot read (year 0, offset of 16 hours or more)',
      async (before) => {
        expect(expectError(await list(user, { before }), 400)).toEqual(['before']);
      },
    );

    it('accepts the extremes Postgres can hold', async () => {
      for (
        const before of [
          '0001-01-01T00:00:00Z',
          '0001-01-01T00:00:00+01:00',
          '9999-12-31T23:59:59.999999Z',
          '2026-01-01T00:00:00+15:59',
          '2026-01-01T00:00:00-15:59',
          '2026-01-01T00:00:00+14:00',
        ]
      ) {
        const res = await list(user, { before });
        expect(res.status, `${before}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    });

    it.each([
      [{ category: 'refund' }, 'category'],
      [{ category: 'DEPOSIT' }, 'category'],
      [{ status: 'done' }, 'status'],
      [{ escrow_id: 'not-a-uuid' }, 'escrow_id'],
      [{ page: '2' }, 'page'],
      [{ cursor: '2026-01-01T00:00:00Z' }, 'cursor'],
    ] as [Query, string][])('rejects %j with 400 naming %s', async (query, field) => {
      expect(expectError(await list(user, query), 400)).toEqual([field]);
    });

    it('rejects a parameter given twice', async () => {
      const twice = await get('transaction-list?limit=5&limit=6', { token: user.accessToken });
      expect(expectError(twice, 400)).toEqual(['limit']);
    });

    it('needs a bearer token and GET', async () => {
      expectError(await get(transactionList), 401);
      expectError(await post(transactionList, {}, { token: user.accessToken }), 405);
    });
  });

  // ---- pagination: ties, default limit, exactness -------------------------------------------------

  describe('pagination', () => {
    it('30 rows inserted with one created_at get distinct created_at values, microseconds apart', async () => {
      const user = await signUp();
      await bulkInsert(user.id, 30);
      const rows = await testDb()<{ ts: string; amount: string }[]>`
      select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as ts, amount::text
        from public.transactions where user_id = ${user.id} order by created_at`;
      expect(rows).toHaveLength(30);
      expect(new Set(rows.map((r) => r.ts)).size).toBe(30);
      expect(rows[0]).toEqual({ ts: '2026-01-01T00:00:00.000000', amount: '100' });
      expect(rows[29]).toEqual({ ts: '2026-01-01T00:00:00.000029', amount: '3000' });
    });

    it('defaults to 20 rows; limit 7 walks all 30 tied rows exactly once, newest first', async () => {
      const user = await signUp();
      await bulkInsert(user.id, 30);

      const first = await page(user);
      expect(first.data).toHaveLength(20);
      expect(first.data.map((t) => t.amount)).toEqual(Array.from({ length: 20 }, (_, i) => 30 - i));
      // the 20th newest row is 10 microseconds after the first (Postgres drops the trailing zero)
      expect(first.next_cursor).toBe('2026-01-01T00:00:00.00001Z');
      const rest = await page(user, { before: first.next_cursor! });
      expect(rest.data.map((t) => t.amount)).toEqual(Array.from({ length: 10 }, (_, i) => 10 - i));

      const p1 = await page(user, { limit: 7 });
      // the cursor carries the microseconds: the 7th newest row is 23 microseconds after the first
      expect(p1.next_cursor).toBe('2026-01-01T00:00:00.000023Z');

      const { rows, pages } = await walk(user, 7);
      expect(pages).toEqual([7, 7, 7, 7, 2]);
      expect(rows).toHaveLength(30);
      expect(new Set(ids(rows)).size).toBe(30);
      expect(rows.map((t) => t.amount)).toEqual(Array.from({ length: 30 }, (_, i) => 30 - i));
      expectStrictlyNewestFirst(rows);
      const dbIds = await testDb()<{ id: string }[]>`select id from public.transactions where user_id = ${user.id}`;
      expect(new Set(ids(rows))).toEqual(new Set(dbIds.map((r) => r.id)));

      // the same walk for every page size from 1 to 31 loses and repeats nothing
      for (const limit of [1, 2, 3, 5, 10, 29, 30, 31]) {
        const w = await walk(user, limit);
        expect(ids(w.rows), `limit ${limit}`).toEqual(ids(rows));
      }
    });

    it('a cursor given with another offset means the same instant', async () => {
      const user = await signUp();
      await bulkInsert(user.id, 30);
      // 2026-01-01T00:00:00.000010Z written as +01:00: the rows strictly before it are the first 10
      const { data } = await page(user, { before: '2026-01-01T01:00:00.000010+01:00', limit: 100 });
      expect(data.map((t) => t.amount)).toEqual(Array.from({ length: 10 }, (_, i) => 10 - i));
    });

    it('rows inserted later with an earlier or equal created_at still sort after the existing ones', async () => {
      const user = await signUp();
      await bulkInsert(user.id, 5, '2026-01-01T00:00:00Z');
      await bulkInsert(user.id, 5, '2025-06-01T00:00:00Z'); // moved after the newest existing row
      const { rows, pages } = await walk(user, 3);
      expect(pages).toEqual([3, 3, 3, 1]);
      expect(rows.map((t) => t.amount)).toEqual([5, 4, 3, 2, 1, 5, 4, 3, 2, 1]);
      expectStrictlyNewestFirst(rows);
      expect(rows[0]!.created_at).toBe('2026-01-01T00:00:00.000009Z');
    });

    it('concurrent top-ups through the API get distinct created_at and page exactly', async () => {
      const user = await signUp({ tier: 1 });
      const refs = await Promise.all(Array.from({ length: 10 }, (_, i) => topup(user, 100 + i, i % 2 === 0)));
      const { rows, pages } = await walk(user, 3);
      expect(pages).toEqual([3, 3, 3, 1]);
      expect(new Set(ids(rows))).toEqual(new Set(refs));
      expectStrictlyNewestFirst(rows);
      const pending = await walk(user, 2, { status: 'pending' });
      expect(pending.rows).toHaveLength(5);
      expect(new Set(ids(pending.rows))).toEqual(new Set(refs.filter((_, i) => i % 2 === 1)));
    });

    it("another user's tied rows never appear, even at the same instant", async () => {
      const [a, b] = await Promise.all([signUp(), signUp()]);
      await bulkInsert(a.id, 12);
      await bulkInsert(b.id, 12);
      const wa = await walk(a, 5);
      const wb = await walk(b, 5);
      expect(wa.rows).toHaveLength(12);
      expect(wb.rows).toHaveLength(12);
      const overlap = ids(wa.rows).filter((id) => ids(wb.rows).includes(id));
      expect(overlap).toEqual([]);
      const [owners] = await testDb()<{ a: number; b: number }[]>`
      select count(*) filter (where user_id = ${a.id})::int as a, count(*) filter (where user_id = ${b.id})::int as b
        from public.transactions where id = any(${ids(wa.rows)}::uuid[])`;
      expect(owners).toEqual({ a: 12, b: 0 });
    });
  });

  describe('figures in metadata', () => {
    it('are naira, like amount: an escrow funding carries the escrow amount, payer fee and VAT in naira', async () => {
      const { fundedDeal } = await import('../support/escrows.ts');
      const deal = await fundedDeal({ amount: 12_345.67 });
      const res = await get(transactionList, {
        token: deal.payer.accessToken,
        query: { escrow_id: deal.escrowId, category: 'escrow' },
      });
      expectOk(res);
      const funding = (res.body.data.data as { type: string; amount: number; metadata: Record<string, unknown> }[])
        .find((t) => t.type === 'escrow_funding');
      expect(funding?.amount).toBe(deal.feeBreakdown.total_charge);
      expect(funding?.metadata).toMatchObject({
        amount: 12_345.67,
        payer_fee: deal.feeBreakdown.payer_fee,
        vat: deal.feeBreakdown.vat,
      });
      // the database keeps kobo
      const [row] = await testDb()<{ metadata: { amount: number } }[]>`
      select metadata from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_funding'`;
      expect(row?.metadata.amount).toBe(1_234_567);
    });
  });
});
