// Row-level security and privileges of the money tables, pgTAP-style: statements run straight in
// the test database as a given user (role authenticated with that user's claims) or as anon,
// inside transactions that are always rolled back. Plus the ledger's immutability, which holds
// even for the table owner.
import { randomInt } from 'node:crypto';
import type postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { asUserSql, expectDenied, failureOf, type PgFailure, testDb } from '../support/db.ts';
import { walletKobo } from '../support/ledger.ts';
import { signUp, type TestUser } from '../support/users.ts';

// ---- helpers -------------------------------------------------------------------------------

type Tx = postgres.TransactionSql;

/**
 * The statement, run as the user, changes nothing: either it is refused (42501) or it reaches 0
 * rows. Returns the outcome so a test can be stricter.
 */
async function expectNoEffect(
  userId: string,
  fn: (tx: Tx) => Promise<postgres.RowList<postgres.Row[]>>,
  label: string,
) {
  let count: number | undefined;
  const failure = await failureOf(async () => {
    const r = await asUserSql(userId, fn);
    count = r.count;
  });
  if (failure) expect(failure.code, `${label}: ${failure.message}`).toBe('42501');
  else expect(count, `${label}: changed ${count} row(s)`).toBe(0);
  return failure ? 'denied' : 'no rows';
}

/** Runs fn as the test database's own (owner) role in a transaction that is always rolled back. */
async function asOwnerSql<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  let result: T;
  const rollback = new Error('rollback');
  try {
    await testDb().begin(async (tx) => {
      result = await fn(tx);
      throw rollback;
    });
  } catch (err) {
    if (err !== rollback) throw err;
  }
  return result!;
}

/** Same, as service_role (what the functions use). */
async function asServiceSql<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return asOwnerSql(async (tx) => {
    await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role":"service_role"}', true)`;
    return fn(tx);
  });
}

const digits = (n: number) => Array.from({ length: n }, (_, i) => String(randomInt(i === 0 ? 1 : 0, 10))).join('');

const PUBLIC_TABLES = ['transactions', 'saved_cards', 'payout_accounts', 'virtual_accounts'] as const;
const PRIVATE_TABLES = [
  'card_authorizations',
  'ledger_accounts',
  'ledger_entries',
  'ledger_transfers',
  'webhook_inbox',
  'webhook_failures',
  'payment_flags',
  'idempotency_keys',
] as const;

interface Fixture {
  user: TestUser;
  cardId: string;
  payoutId: string;
  txId: string;
  transferId: string;
}

/**
 * One user with a card, a payout account, a completed top-up (with ledger entries) and a virtual
 * account. The user is at tier 1: at tier 0 (phone only) the identity floor refuses card_add and
 * topup_create (tests/integration/kyc-floor.test.ts).
 */
async function fixture(): Promise<Fixture> {
  const user = await signUp({ tier: 1 });
  const sql = testDb();
  const suffix = digits(8);
  const [card] = await sql<{ card_id: string }[]>`
    select card_id from private.card_add(${user.id}, ${`AUTH_rls_${suffix}`}, '4081', 'visa', '12', '2030', 'TEST BANK', ${`SIG_rls_${suffix}`})`;
  const [payout] = await sql<{ id: string }[]>`
    select private.payout_add(${user.id}, '058', 'Guaranty Trust Bank', ${
    digits(10)
  }, 'OBI ADA', true, ${`RCP_rls_${suffix}`}) as id`;
  const [tx] = await sql<{ id: string }[]>`select private.topup_create(${user.id}, 500000, 'paystack', null) as id`;
  await sql`select private.topup_succeed(${tx!.id}, 500000, ${`CHG_rls_${suffix}`}, '{}'::jsonb)`;
  const [transfer] = await sql<{ id: string }[]>`select id from private.ledger_transfers where transaction_id = ${
    tx!.id
  }`;
  await sql`
    insert into public.virtual_accounts (user_id, status, account_number, account_name, bank_name, provider, provider_customer_code)
    values (${user.id}, 'active', ${digits(10)}, 'ESCROW/OBI ADA', 'Test Bank', 'paystack', ${`CUS_rls_${suffix}`})`;
  await sql`
    insert into private.idempotency_keys (user_id, operation, key, request_hash, response_status, response_body)
    values (${user.id}, 'card-add', ${`key-${suffix}`}, 'hash', 201, '{}')`;
  return { user, cardId: card!.card_id, payoutId: payout!.id, txId: tx!.id, transferId: transfer!.id };
}

let a: Fixture;
let b: Fixture;

beforeAll(async () => {
  [a, b] = await Promise.all([fixture(), fixture()]);
});

// ---- reading the public money tables -----------------------------------------------------------

describe('a user reads only their own money rows', () => {
  it.each(PUBLIC_TABLES)("public.%s: own rows only, never the other user's", async (table) => {
    for (const [me, them] of [[a, b], [b, a]] as const) {
      const rows = await asUserSql(
        me.user.id,
        (tx) => tx<{ user_id: string }[]>`select * from ${tx('public')}.${tx(table)}`,
      );
      expect(rows.length, `${table} as ${me.user.id}`).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.user_id))).toEqual(new Set([me.user.id]));
      const [stored] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from ${testDb()('public')}.${testDb()(table)} where user_id = ${me.user.id}`;
      expect(rows).toHaveLength(stored!.n);
      // asking for the other user's rows by id finds nothing
      const theirs = await asUserSql(
        me.user.id,
        (tx) => tx`select 1 from ${tx('public')}.${tx(table)} where user_id = ${them.user.id}`,
      );
      expect(theirs).toHaveLength(0);
    }
  });

  it("cannot see the other user's card, payout account or transaction by id", async () => {
    const found = await asUserSql(a.user.id, async (tx) => ({
      card: await tx`select 1 from public.saved_cards where id = ${b.cardId}`,
      payout: await tx`select 1 from public.payout_accounts where id = ${b.payoutId}`,
      tx: await tx`select 1 from public.transactions where id = ${b.txId}`,
      own: await tx`select 1 from public.transactions where id = ${a.txId}`,
    }));
    expect([found.card.length, found.payout.length, found.tx.length, found.own.length]).toEqual([0, 0, 0, 1]);
  });

  it('a forged claim for nobody sees nothing', async () => {
    const nobody = '00000000-0000-4000-8000-000000000000';
    for (const table of PUBLIC_TABLES) {
      const rows = await asUserSql(nobody, (tx) => tx`select 1 from ${tx('public')}.${tx(table)}`);
      expect(rows, table).toHaveLength(0);
    }
  });

  it.each(PUBLIC_TABLES)('anon cannot read public.%s', async (table) => {
    await expectDenied('anon', (tx) => tx`select * from ${tx('public')}.${tx(table)}`, `anon select ${table}`);
  });
});

// ---- writing the public money tables -----------------------------------------------------------

describe('a user cannot write the money tables directly', () => {
  it('cannot INSERT into any of them (own user_id or another)', async () => {
    for (const owner of [a.user.id, b.user.id]) {
      await expectDenied(
        a.user.id,
        (tx) =>
          tx`
        insert into public.transactions (user_id, type, category, amount, direction, status, provider, completed_at)
        values (${owner}, 'virtual_account_deposit', 'deposit', 100000000, 'in', 'succeeded', 'paystack', now())`,
        'insert transactions',
      );
      await expectDenied(a.user.id, (tx) =>
        tx`
        insert into public.saved_cards (user_id, last4, brand, exp_month, exp_year, signature)
        values (${owner}, '1111', 'visa', '01', '2030', 'SIG_forged')`, 'insert saved_cards');
      await expectDenied(a.user.id, (tx) =>
        tx`
        insert into public.payout_accounts (user_id, bank_name, bank_code, account_number, account_name, verified)
        values (${owner}, 'Bank', '058', '0000000001', 'Mallory', true)`, 'insert payout_accounts');
      await expectDenied(
        a.user.id,
        (tx) =>
          tx`
        insert into public.virtual_accounts (user_id, status, provider) values (${owner}, 'active', 'paystack')`,
        'insert virtual_accounts',
      );
    }
    await expectDenied(
      'anon',
      (tx) =>
        tx`
      insert into public.virtual_accounts (user_id, status, provider) values (${a.user.id}, 'active', 'paystack')`,
      'anon insert',
    );
  });

  it("cannot UPDATE their own rows or anyone else's", async () => {
    for (const target of [a, b]) {
      const label = target === a ? 'own' : 'foreign';
      await expectNoEffect(
        a.user.id,
        (tx) => tx`update public.transactions set amount = 999999999, status = 'succeeded' where id = ${target.txId}`,
        `${label} transactions`,
      );
      await expectNoEffect(
        a.user.id,
        (tx) => tx`update public.saved_cards set is_default = false where id = ${target.cardId}`,
        `${label} saved_cards`,
      );
      await expectNoEffect(
        a.user.id,
        (tx) =>
          tx`update public.payout_accounts set account_number = '0000000001', verified = true where id = ${target.payoutId}`,
        `${label} payout_accounts`,
      );
      await expectNoEffect(
        a.user.id,
        (tx) => tx`update public.virtual_accounts set status = 'inactive' where user_id = ${target.user.id}`,
        `${label} virtual_accounts`,
      );
      await expectNoEffect(
        a.user.id,
        (tx) => tx`update public.transactions set user_id = ${a.user.id} where id = ${target.txId}`,
        `${label} reassign`,
      );
    }
    // in fact every one of them is refused outright: no UPDATE privilege at all
    await expectDenied(
      a.user.id,
      (tx) => tx`update public.transactions set message = null where id = ${a.txId}`,
      'update own transaction',
    );
    await expectDenied(
      a.user.id,
      (tx) => tx`update public.payout_accounts set verified = true where id = ${a.payoutId}`,
      'update own payout',
    );
  });

  it("cannot DELETE their own rows or anyone else's", async () => {
    for (const target of [a, b]) {
      await expectNoEffect(
        a.user.id,
        (tx) => tx`delete from public.transactions where id = ${target.txId}`,
        'delete transactions',
      );
      await expectNoEffect(
        a.user.id,
        (tx) => tx`delete from public.saved_cards where id = ${target.cardId}`,
        'delete saved_cards',
      );
      await expectNoEffect(
        a.user.id,
        (tx) => tx`delete from public.payout_accounts where id = ${target.payoutId}`,
        'delete payout_accounts',
      );
      await expectNoEffect(
        a.user.id,
        (tx) => tx`delete from public.virtual_accounts where user_id = ${target.user.id}`,
        'delete virtual_accounts',
      );
    }
    for (const table of PUBLIC_TABLES) {
      await expectDenied(a.user.id, (tx) => tx`delete from ${tx('public')}.${tx(table)}`, `delete all ${table}`);
      await expectDenied('anon', (tx) => tx`delete from ${tx('public')}.${tx(table)}`, `anon delete ${table}`);
    }
  });

  it('everything is still there afterwards', async () => {
    const [row] = await testDb()<{ tx: number; cards: number; payouts: number; vas: number; amount: string }[]>`
      select (select count(*)::int from public.transactions where user_id in (${a.user.id}, ${b.user.id})) as tx,
             (select count(*)::int from public.saved_cards where user_id in (${a.user.id}, ${b.user.id})) as cards,
             (select count(*)::int from public.payout_accounts where user_id in (${a.user.id}, ${b.user.id})) as payouts,
             (select count(*)::int from public.virtual_accounts where user_id in (${a.user.id}, ${b.user.id}) and status = 'active') as vas,
             (select amount::text from public.transactions where id = ${a.txId}) as amount`;
    expect(row).toEqual({ tx: 2, cards: 2, payouts: 2, vas: 2, amount: '500000' });
  });
});

// ---- the private schema ----------------------------------------------------------------------

describe('the private money tables are out of reach', () => {
  it.each(PRIVATE_TABLES)('private.%s cannot be read by a user or anon (42501)', async (table) => {
    await expectDenied(a.user.id, (tx) => tx`select * from ${tx('private')}.${tx(table)}`, `user select ${table}`);
    await expectDenied('anon', (tx) => tx`select * from ${tx('private')}.${tx(table)}`, `anon select ${table}`);
  });

  it('private.card_authorizations cannot be written by a user', async () => {
    await expectDenied(
      a.user.id,
      (tx) =>
        tx`
      update private.card_authorizations set authorization_code = 'AUTH_stolen' where card_id = ${b.cardId}`,
      'update card_authorizations',
    );
    await expectDenied(
      a.user.id,
      (tx) =>
        tx`
      insert into private.card_authorizations (card_id, authorization_code) values (${a.cardId}, 'AUTH_x')`,
      'insert card_authorizations',
    );
  });

  it('a user cannot credit themselves through the ledger tables', async () => {
    await expectDenied(
      a.user.id,
      (tx) =>
        tx`
      update private.ledger_accounts set balance = balance + 100000000 where kind = 'user_wallet' and owner_id = ${a.user.id}`,
      'update ledger_accounts',
    );
    await expectDenied(
      a.user.id,
      (tx) =>
        tx`
      insert into private.ledger_transfers (idempotency_key, kind) values ('forged', 'forged')`,
      'insert ledger_transfers',
    );
  });

  const privateCalls: [string, (tx: Tx, f: Fixture) => Promise<unknown>][] = [
    [
      'post_transfer',
      (tx) =>
        tx`select private.post_transfer('forged-key', 'forged', '[{"account_id": 1, "amount": -100}, {"account_id": 2, "amount": 100}]'::jsonb)`,
    ],
    [
      'withdrawal_create',
      (tx, f) => tx`select private.withdrawal_create(${f.user.id}, 100, ${f.payoutId}, 'paystack')`,
    ],
    ['topup_create', (tx, f) => tx`select private.topup_create(${f.user.id}, 100, 'paystack', null)`],
    ['topup_succeed', (tx, f) => tx`select private.topup_succeed(${f.txId}, 100, 'x', '{}'::jsonb)`],
    [
      'virtual_account_deposit',
      (tx, f) => tx`select private.virtual_account_deposit(${f.user.id}, 100000000, 'paystack', 'forged', '{}'::jsonb)`,
    ],
    ['payout_fail', (tx, f) => tx`select private.payout_fail(${f.txId}, 'x', null)`],
    ['owner_account', (tx, f) => tx`select private.owner_account('user_wallet', ${f.user.id})`],
    [
      'card_add',
      (tx, f) =>
        tx`select * from private.card_add(${f.user.id}, 'AUTH_x', '1111', 'visa', '01', '2030', null, 'SIG_forged')`,
    ],
    ['card_set_default', (tx, f) => tx`select private.card_set_default(${f.user.id}, ${f.cardId})`],
    [
      'payout_add',
      (tx, f) => tx`select private.payout_add(${f.user.id}, '058', 'Bank', '0000000001', 'Mallory', true, null)`,
    ],
  ];

  it.each(privateCalls)('private.%s cannot be executed by a user or anon', async (name, call) => {
    await expectDenied(a.user.id, (tx) => call(tx, a), `user ${name}`);
    await expectDenied(a.user.id, (tx) => call(tx, b), `user ${name} for another`);
    await expectDenied('anon', (tx) => call(tx, a), `anon ${name}`);
  });

  it('no money function in private is executable by anon or authenticated', async () => {
    const open = await testDb()<{ signature: string }[]>`
      select p.oid::regprocedure::text as signature
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'private'
         and p.proname in ('post_transfer', 'withdrawal_create', 'topup_create', 'topup_succeed', 'topup_fail',
                           'virtual_account_deposit', 'payout_succeed', 'payout_fail', 'owner_account', 'system_account',
                           'card_add', 'card_remove', 'card_set_default', 'payout_add', 'payout_remove', 'payout_set_default',
                           'strictly_increasing_created_at', 'forbid_change')
         and (has_function_privilege('anon', p.oid, 'EXECUTE') or has_function_privilege('authenticated', p.oid, 'EXECUTE'))`;
    expect(open).toEqual([]);
  });
});

// ---- ledger immutability -----------------------------------------------------------------------

describe('the ledger is append-only, even for the table owner', () => {
  const expectAppendOnly = (f: PgFailure | null, label: string) => {
    expect(f, `${label}: expected an error, but it succeeded`).not.toBeNull();
    expect(f!.message, label).toMatch(/append-only/);
    expect(f!.code, label).toBe('42501');
  };

  it('the fixture has ledger entries to try it on', async () => {
    const [row] = await testDb()<{ n: number; sum: string }[]>`
      select count(*)::int as n, sum(amount)::text as sum from private.ledger_entries where transfer_id = ${a.transferId}`;
    expect(row).toEqual({ n: 2, sum: '0' });
  });

  it('UPDATE and DELETE of ledger_entries fail for the owner role', async () => {
    expectAppendOnly(
      await failureOf(() =>
        asOwnerSql((tx) =>
          tx`update private.ledger_entries set amount = amount * 2 where transfer_id = ${a.transferId}`
        )
      ),
      'update entries',
    );
    expectAppendOnly(
      await failureOf(() =>
        asOwnerSql((tx) => tx`delete from private.ledger_entries where transfer_id = ${a.transferId}`)
      ),
      'delete entries',
    );
    expectAppendOnly(
      await failureOf(() => asOwnerSql((tx) => tx`truncate private.ledger_entries`)),
      'truncate entries',
    );
  });

  it('UPDATE and DELETE of ledger_transfers fail for the owner role', async () => {
    expectAppendOnly(
      await failureOf(() =>
        asOwnerSql((tx) => tx`update private.ledger_transfers set kind = 'rewritten' where id = ${a.transferId}`)
      ),
      'update transfers',
    );
    expectAppendOnly(
      await failureOf(() =>
        asOwnerSql((tx) =>
          tx`update private.ledger_transfers set idempotency_key = 'reused' where id = ${a.transferId}`
        )
      ),
      'update transfer key',
    );
    const del = await failureOf(() =>
      asOwnerSql((tx) => tx`delete from private.ledger_transfers where id = ${a.transferId}`)
    );
    expectAppendOnly(del, 'delete transfers');
  });

  it('service_role has no UPDATE or DELETE privilege on them at all', async () => {
    for (
      const [label, stmt] of [
        [
          'update entries',
          (tx: Tx) => tx`update private.ledger_entries set amount = amount where transfer_id = ${a.transferId}`,
        ],
        ['delete entries', (tx: Tx) => tx`delete from private.ledger_entries where transfer_id = ${a.transferId}`],
        [
          'update transfers',
          (tx: Tx) => tx`update private.ledger_transfers set kind = kind where id = ${a.transferId}`,
        ],
        ['delete transfers', (tx: Tx) => tx`delete from private.ledger_transfers where id = ${a.transferId}`],
        ['truncate entries', (tx: Tx) => tx`truncate private.ledger_entries`],
      ] as const
    ) {
      const f = await failureOf(() => asServiceSql(stmt));
      expect(f, `service_role ${label}`).not.toBeNull();
      expect(f!.code, `service_role ${label}: ${f!.message}`).toBe('42501');
    }
  });

  it('the entries are unchanged afterwards, and the books still balance', async () => {
    const [row] = await testDb()<{ n: number; sum: string; kind: string }[]>`
      select count(*)::int as n, sum(e.amount)::text as sum, min(t.kind) as kind
        from private.ledger_entries e join private.ledger_transfers t on t.id = e.transfer_id
       where e.transfer_id = ${a.transferId}`;
    expect(row).toEqual({ n: 2, sum: '0', kind: 'wallet_topup' });
    expect(await walletKobo(a.user.id)).toBe(500_000);
  });
});
