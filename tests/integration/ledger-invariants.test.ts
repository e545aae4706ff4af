// The ledger's invariants, under concurrency:
//   * the sum of all account balances is zero;
//   * every account's balance equals the sum of its entries; every transfer sums to zero;
//   * no wallet is ever negative;
//   * every user's transactions agree with the ledger.
// First straight against private.post_transfer, then through a seeded random storm of top-ups,
// withdrawals, provider outcomes, duplicate webhooks and virtual-account deposits driven through
// the real server and the Paystack fake. STORM_SEED=<n> replays a storm.
import { describe, expect, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';

async function walletBalance(userId: string): Promise<number> {
  const [row] = await testDb()<{ balance: string }[]>`
    select coalesce((select balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = ${userId}), 0)::text as balance`;
  return Number(row?.balance);
}

/** The user's transactions, read as the ledger should see them. */
async function transactionsAgreeWithLedger(userId: string) {
  const sql = testDb();
  const [sums] = await sql<{ deposits: string; withdrawals: string }[]>`
    select coalesce(sum(amount) filter (where category = 'deposit' and status = 'succeeded'), 0)::text as deposits,
           coalesce(sum(amount) filter (where category = 'withdrawal' and status in ('pending', 'succeeded')), 0)::text as withdrawals
      from public.transactions where user_id = ${userId}`;
  expect(await walletBalance(userId)).toBe(Number(sums?.deposits) - Number(sums?.withdrawals));
  // each movement has exactly the ledger transfers its status implies
  const rows = await sql<{ id: string; category: string; status: string; transfers: number }[]>`
    select t.id, t.category::text, t.status::text,
           (select count(*)::int from private.ledger_transfers lt where lt.transaction_id = t.id) as transfers
      from public.transactions t where t.user_id = ${userId}`;
  for (const t of rows) {
    const expected = t.category === 'deposit' ? (t.status === 'succeeded' ? 1 : 0) : t.status === 'failed' ? 2 : 1;
    expect(t.transfers, `${t.category} ${t.status} ${t.id}`).toBe(expected);
  }
}

async function fundedWallets(n: number, kobo: number): Promise<{ owners: string[]; accounts: number[] }> {
  const sql = testDb();
  const owners: string[] = [];
  const accounts: number[] = [];
  for (let i = 0; i < n; i++) {
    const user = await signUp();
    const [acc] = await sql<{ id: string }[]>`select private.owner_account('user_wallet', ${user.id}) as id`;
    await sql`select private.post_transfer(${`test-fund:${user.id}`}, 'test_funding',
      ${sql.json([{ system: 'provider_clearing', amount: -kobo }, { account_id: Number(acc?.id), amount: kobo }])})`;
    owners.push(user.id);
    accounts.push(Number(acc?.id));
  }
  return { owners, accounts };
}

describe('private.post_transfer under concurrency', () => {
  it('300 concurrent transfers draining 4 wallets into 4 others never overdraw one and keep the books balanced', async () => {
    const sql = testDb();
    const { accounts } = await fundedWallets(8, 10_000);
    const sentBefore = await Promise.all(
      accounts.slice(0, 4).map(async (a) =>
        Number((await sql`select balance from private.ledger_accounts where id = ${a}`)[0]?.balance)
      ),
    );
    expect(sentBefore).toEqual([10_000, 10_000, 10_000, 10_000]);
    const before = await Promise.all(
      accounts.map(async (a) =>
        Number((await sql`select balance from private.ledger_accounts where id = ${a}`)[0]?.balance)
      ),
    );
    // four senders drain into four receivers: most attempts must find the sender short
    const outcomes = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const from = accounts[i % 4] as number;
        const to = accounts[4 + ((i * 3) % 4)] as number;
        const amount = 500 + ((i * 7919) % 1500);
        try {
          await sql`select private.post_transfer(${`storm-sql:${crypto.randomUUID()}`}, 'test',
            ${sql.json([{ account_id: from, amount: -amount }, { account_id: to, amount }])})`;
          return 'ok';
        } catch (err) {
          expect((err as { code?: string }).code).toBe('ES402');
          return 'short';
        }
      }),
    );
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThan(10);
    expect(outcomes.filter((o) => o === 'short').length).toBeGreaterThan(10);
    const after = await Promise.all(
      accounts.map(async (a) =>
        Number((await sql`select balance from private.ledger_accounts where id = ${a}`)[0]?.balance)
      ),
    );
    expect(after.every((b) => b >= 0)).toBe(true);
    expect(after.reduce((x, y) => x + y, 0)).toBe(before.reduce((x, y) => x + y, 0));
    await expectLedgerInvariants();
  });

  it('the same key posted 20 times at once makes one transfer; other entries under that key are refused', async () => {
    const sql = testDb();
    const { accounts } = await fundedWallets(2, 5_000);
    const key = `once:${crypto.randomUUID()}`;
    const entries = [{ account_id: accounts[0] as number, amount: -1_000 }, {
      account_id: accounts[1] as number,
      amount: 1_000,
    }, { system: 'platform_fees', amount: 0 }].filter((e) => e.amount !== 0);
    const ids = await Promise.all(
      Array.from(
        { length: 20 },
        async () =>
          (await sql<{ id: string }[]>`select private.post_transfer(${key}, 'test', ${sql.json(entries)}) as id`)[0]
            ?.id,
      ),
    );
    expect(new Set(ids).size).toBe(1);
    const [count] = await sql<
      { n: number }[]
    >`select count(*)::int as n from private.ledger_transfers where idempotency_key = ${key}`;
    expect(count?.n).toBe(1);
    expect(
      Number((await sql`select balance from private.ledger_accounts where id = ${accounts[0] as number}`)[0]?.balance),
    ).toBe(4_000);
    await expect(
      sql`select private.post_transfer(${key}, 'test', ${
        sql.json([{ account_id: accounts[0] as number, amount: -2_000 }, {
          account_id: accounts[1] as number,
          amount: 2_000,
        }])
      })`,
    ).rejects.toMatchObject({ code: 'ES409' });
    // a system entry replayed from another connection (another shard) is still the same transfer
    const feeKey = `fee:${crypto.randomUUID()}`;
    const feeEntries = [{ account_id: accounts[1] as number, amount: -100 }, { system: 'platform_fees', amount: 100 }];
    const feeIds = await Promise.all(
      Array.from(
        { length: 6 },
        async () =>
          (await sql<{ id: string }[]>`select private.post_transfer(${feeKey}, 'test', ${sql.json(feeEntries)}) as id`)[
            0
          ]
            ?.id,
      ),
    );
    expect(new Set(feeIds).size).toBe(1);
    await expectLedgerInvariants();
  });

  it('refuses malformed transfers: unbalanced, one entry, zero or fractional amounts, repeated account', async () => {
    const sql = testDb();
    const { accounts } = await fundedWallets(2, 1_000);
    const [a, b] = accounts as [number, number];
    const bad = [
      [{ account_id: a, amount: -100 }, { account_id: b, amount: 99 }],
      [{ account_id: a, amount: 0 }, { account_id: b, amount: 0 }],
      [{ account_id: a, amount: -100 }],
      [{ account_id: a, amount: -100.5 }, { account_id: b, amount: 100.5 }],
      [{ account_id: a, amount: -100 }, { account_id: a, amount: 100 }],
    ];
    for (const entries of bad) {
      await expect(sql`select private.post_transfer(${`bad:${crypto.randomUUID()}`}, 'test', ${sql.json(entries)})`)
        .rejects.toMatchObject({ code: 'ES422' });
    }
    await expectLedgerInvariants();
  });
});

/** mulberry32: a small seeded PRNG, so a failing storm can be replayed with STORM_SEED. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('a random storm through the real server', () => {
  it(
    'top-ups, withdrawals, failures, reversals and duplicate webhooks keep every invariant',
    { timeout: 180_000 },
    async () => {
      const seed = Number(process.env.STORM_SEED ?? Date.now() % 1_000_000);
      const rnd = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
      const log: string[] = [`seed ${seed}`];

      const users: (TestUser & { account: string; va?: string })[] = [];
      for (let i = 0; i < 5; i++) {
        const u = await signUp();
        const account = `7${String(Math.floor(rnd() * 1e9)).padStart(9, '0')}`;
        await paystack.registerAccount('058', account, 'OBI ADA');
        const added = await post('payout-add', {
          bank_code: '058',
          bank_name: 'GTBank',
          account_number: account,
          account_name: 'Ada Obi',
        }, { token: u.accessToken });
        expect(added.status, JSON.stringify(added.body)).toBe(201);
        users.push({ ...u, account });
      }
      // the last user's bank refuses every transfer
      await paystack.fail({
        path: '/transfer',
        field: 'account_number',
        value: (users[4] as { account: string }).account,
      }, 'refuse');
      // two users get a virtual account
      for (const u of users.slice(0, 2)) {
        expect((await post('virtual-account-create', {}, { token: u.accessToken })).status).toBe(200);
        const number = `55${String(Math.floor(rnd() * 1e8)).padStart(8, '0')}`;
        await paystack.assignOutcome(`${u.id}@customers.escrow.ng`, true, { account_number: number });
        u.va = number;
      }

      const topup = async (u: TestUser) => {
        const amount = pick([100, 250.5, 1000, 5000, 12_000.75]);
        const r = await post('wallet-topup', { amount }, { token: u.accessToken });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const ref = r.body.data.reference as string;
        const fate = rnd();
        if (fate < 0.6) await paystack.chargeSuccess(ref, { times: 1 + Math.floor(rnd() * 3), concurrent: true });
        else if (fate < 0.75) {
          // short-paid, and Paystack's verify agrees: nothing may be credited (held for review)
          await paystack.chargeStatus(ref, 'success', Math.round(amount * 100) - 1);
          await paystack.chargeSuccess(ref, { amount: Math.round(amount * 100) - 1 });
        }
        log.push(`topup ${amount} ${fate < 0.6 ? 'paid' : fate < 0.75 ? 'short-paid' : 'abandoned'}`);
      };
      const withdraw = async (u: TestUser) => {
        const amount = pick([100, 300, 1500, 4000, 20_000]);
        const r = await post('wallet-withdraw', { amount }, { token: u.accessToken });
        log.push(`withdraw ${amount} -> ${r.status}`);
        if (r.status !== 200) {
          expect([409, 502]).toContain(r.status);
          return;
        }
        const ref = r.body.data.id as string;
        const fate = rnd();
        const opts = { times: 1 + Math.floor(rnd() * 3), concurrent: true };
        if (fate < 0.4) await paystack.transferOutcome(ref, 'transfer.success', opts);
        else if (fate < 0.6) await paystack.transferOutcome(ref, 'transfer.failed', opts);
        else if (fate < 0.75) await paystack.transferOutcome(ref, 'transfer.reversed', opts);
        else if (fate < 0.85) {
          await paystack.transferOutcome(ref, 'transfer.success');
          await paystack.transferOutcome(ref, 'transfer.reversed', opts);
        }
      };
      const deposit = async (u: TestUser & { va?: string }) => {
        if (!u.va) return;
        const kobo = pick([5_000, 150_000, 1_000_000]);
        await paystack.dvaDeposit(u.va, kobo, { times: 1 + Math.floor(rnd() * 3), concurrent: true });
        log.push(`deposit ${kobo}`);
      };

      try {
        for (let wave = 0; wave < 8; wave++) {
          await Promise.all(
            Array.from({ length: 10 }, () => {
              const u = pick(users);
              const op = rnd();
              return op < 0.4 ? topup(u) : op < 0.8 ? withdraw(u) : deposit(u);
            }),
          );
          await expectLedgerInvariants();
        }
        for (const u of users) {
          await transactionsAgreeWithLedger(u.id);
          const wallet = await get('wallet-get', { token: u.accessToken });
          expect(Math.round(wallet.body.data.balance * 100)).toBe(await walletBalance(u.id));
        }
        await expectLedgerInvariants();
      } catch (err) {
        console.error(`storm failed; replay with STORM_SEED=${seed}\n${log.join('\n')}`);
        throw err;
      }
    },
  );
});
