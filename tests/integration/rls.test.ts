// Row-level security and privileges, pgTAP-style: statements run straight in the database as a
// given user (role authenticated with that user's JWT claims) or as anon, inside transactions
// that are always rolled back. Plus catalog checks that hold for every table and function, so a
// table or function added later without protection fails here by name.
import { beforeAll, describe, expect, it } from 'vitest';
import { patch } from '../support/api.ts';
import { asAnonSql, asUserSql, expectDenied, failureOf, testDb } from '../support/db.ts';
import { signUp, type TestUser } from '../support/users.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

type Tx = Parameters<Parameters<typeof asUserSql>[1]>[0];

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * Functions in public/private that the API roles are meant to execute (for example helpers that
 * RLS policies call). Key: regprocedure text, e.g. 'private.is_party(uuid)'. Value: why.
 * Empty today: every function is reached by service_role only.
 */
const EXECUTABLE_BY_API_ROLES: Record<string, string> = {};

/** Tables in schema public whose rows anon may read (none: every endpoint but auth needs a user). */
const ANON_READABLE_TABLES: string[] = [];

interface TableRow {
  schema: string;
  name: string;
  rls: boolean;
  first_column: string;
}

interface FunctionRow {
  schema: string;
  name: string;
  signature: string;
  kind: string;
  arg_types: string[];
  anon: boolean;
  authenticated: boolean;
}

async function tables(schemas: string[]): Promise<TableRow[]> {
  return testDb()<TableRow[]>`
    select n.nspname as schema, c.relname as name, c.relrowsecurity as rls,
           (select a.attname from pg_attribute a
             where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped order by a.attnum limit 1) as first_column
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ${testDb()(schemas)} and c.relkind in ('r', 'p')
     order by 1, 2`;
}

async function functions(schemas: string[]): Promise<FunctionRow[]> {
  return testDb()<FunctionRow[]>`
    select n.nspname as schema, p.proname as name, p.oid::regprocedure::text as signature, p.prokind as kind,
           array(select format_type(t.oid, null)
                   from unnest(p.proargtypes::oid[]) with ordinality as t(oid, i) order by t.i) as arg_types,
           has_function_privilege('anon', p.oid, 'EXECUTE') as anon,
           has_function_privilege('authenticated', p.oid, 'EXECUTE') as authenticated
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ${testDb()(schemas)}
       and not exists (select 1 from pg_depend d
                        where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
     order by 3`;
}

/** `select schema.fn(null::t1, null::t2, ...)` (or CALL for procedures). */
function callWithNulls(f: FunctionRow): string {
  const args = f.arg_types.map((t) => `null::${t}`).join(', ');
  const target = `${ident(f.schema)}.${ident(f.name)}(${args})`;
  return f.kind === 'p' ? `call ${target}` : `select ${target}`;
}

// ---- fixtures ------------------------------------------------------------------------------

let a: TestUser;
let b: TestUser;
let c: TestUser; // has no next of kin

const nokBody = (first: string) => ({
  first_name: first,
  last_name: 'Kin',
  phone: '08030000000',
  address: '1 Broad Street, Lagos',
  relationship: 'Parent',
});

beforeAll(async () => {
  [a, b, c] = await Promise.all([
    signUp({ first_name: 'Alice' }),
    signUp({ first_name: 'Bayo' }),
    signUp({ first_name: 'Chi' }),
  ]);
  for (const [u, name] of [[a, 'KinOfA'], [b, 'KinOfB']] as const) {
    const res = await patch(profileNokUpdate, nokBody(name), { token: u.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});

// ---- profiles ------------------------------------------------------------------------------

describe('RLS: profiles', () => {
  it('auth.uid() is the acting user', async () => {
    const [row] = await asUserSql(a.id, (tx) => tx<{ uid: string }[]>`select auth.uid() as uid`);
    expect(row?.uid).toBe(a.id);
  });

  it('user A sees exactly one profile, their own', async () => {
    const rows = await asUserSql(
      a.id,
      (tx) => tx<{ id: string; phone_number: string }[]>`select * from public.profiles`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.id).toBe(a.id);
    expect(rows[0]?.phone_number).toBe(a.phone);
    const other = await asUserSql(a.id, (tx) => tx`select id from public.profiles where id = ${b.id}`);
    expect(other).toHaveLength(0);
    // the superuser sees all three, so the filtering above is RLS and not an empty table
    const [all] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.profiles where id in ${testDb()([a.id, b.id, c.id])}`;
    expect(all?.n).toBe(3);
  });

  it('a user id with no account sees no profile', async () => {
    const rows = await asUserSql('00000000-0000-4000-8000-000000000000', (tx) => tx`select * from public.profiles`);
    expect(rows).toHaveLength(0);
  });

  it("A's UPDATE of B's profile affects 0 rows, and B's row is unchanged", async () => {
    const result = await asUserSql(a.id, async (tx) => {
      const targeted = await tx`update public.profiles set bio = 'pwned' where id = ${b.id}`;
      const everything = await tx`update public.profiles set bio = 'mine'`;
      return { targeted: targeted.count, everything: everything.count };
    });
    expect(result).toEqual({ targeted: 0, everything: 1 });
    const [row] = await testDb()<{ bio: string | null }[]>`select bio from public.profiles where id = ${b.id}`;
    expect(row?.bio).not.toBe('pwned');
  });

  it('A may update the editable columns of their own profile', async () => {
    const count = await asUserSql(a.id, async (tx) => {
      const r =
        await tx`update public.profiles set first_name = 'Alicia', bio = 'hi', updated_at = now() where id = ${a.id}`;
      return r.count;
    });
    expect(count).toBe(1);
  });

  it.each([
    ['phone_number', "'+2348000000001'"],
    ['id', 'gen_random_uuid()'],
    ['created_at', "now() - interval '1 year'"],
  ])('A cannot UPDATE own %s (permission denied, 42501)', async (column, value) => {
    const failure = await expectDenied(
      a.id,
      (tx) => tx.unsafe(`update public.profiles set ${ident(column)} = ${value} where id = $1`, [a.id]),
      `update ${column}`,
    );
    expect(failure.message).toMatch(/permission denied/);
    const [row] = await testDb()<
      { phone_number: string }[]
    >`select phone_number from public.profiles where id = ${a.id}`;
    expect(row?.phone_number).toBe(a.phone);
  });

  it('A cannot INSERT or DELETE profiles', async () => {
    await expectDenied(
      a.id,
      (tx) =>
        tx`insert into public.profiles (id, first_name, last_name, phone_number)
                 values (${a.id}, 'X', 'Y', '+2348000000002')`,
      'insert profile',
    );
    await expectDenied(a.id, (tx) => tx`delete from public.profiles where id = ${a.id}`, 'delete own profile');
    await expectDenied(a.id, (tx) => tx`delete from public.profiles where id = ${b.id}`, "delete B's profile");
  });
});

// ---- next of kin ---------------------------------------------------------------------------

describe('RLS: next of kin', () => {
  it('A sees only their own next of kin', async () => {
    const rows = await asUserSql(
      a.id,
      (tx) => tx<{ user_id: string; first_name: string }[]>`select * from public.next_of_kin`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user_id: a.id, first_name: 'KinOfA' });
    expect(await asUserSql(a.id, (tx) => tx`select * from public.next_of_kin where user_id = ${b.id}`)).toHaveLength(0);
    expect(await asUserSql(c.id, (tx) => tx`select * from public.next_of_kin`)).toHaveLength(0);
  });

  it.each(['B (who has one)', 'C (who has none)'])(
    'A cannot INSERT a next_of_kin row for %s (RLS error)',
    async (who) => {
      const target = who.startsWith('B') ? () => b.id : () => c.id;
      const failure = await expectDenied(
        a.id,
        (tx) =>
          tx`insert into public.next_of_kin (user_id, first_name, last_name, phone, address, relationship)
                 values (${target()}, 'Evil', 'Twin', '0800', 'Nowhere', 'None')`,
        `insert nok for ${who}`,
      );
      expect(failure.message).toMatch(/row-level security/);
    },
  );

  it("A's UPDATE of B's next of kin affects 0 rows; moving A's own row to B is refused", async () => {
    const count = await asUserSql(
      a.id,
      async (tx) => (await tx`update public.next_of_kin set first_name = 'pwned' where user_id = ${b.id}`).count,
    );
    expect(count).toBe(0);
    const failure = await expectDenied(
      a.id,
      (tx) => tx`update public.next_of_kin set user_id = ${c.id} where user_id = ${a.id}`,
      'move nok to another user',
    );
    expect(failure.message).toMatch(/row-level security/);
    const [row] = await testDb()<
      { first_name: string }[]
    >`select first_name from public.next_of_kin where user_id = ${b.id}`;
    expect(row?.first_name).toBe('KinOfB');
  });

  it('A cannot DELETE next of kin rows', async () => {
    await expectDenied(a.id, (tx) => tx`delete from public.next_of_kin where user_id = ${a.id}`, 'delete own nok');
  });

  it('A may insert their own next of kin when they have none (the policy is not simply closed)', async () => {
    const count = await asUserSql(c.id, async (tx) => {
      const r = await tx`insert into public.next_of_kin (user_id, first_name, last_name, phone, address, relationship)
                         values (${c.id}, 'Ok', 'Kin', '0800', 'Somewhere', 'Friend')`;
      return r.count;
    });
    expect(count).toBe(1); // rolled back afterwards
  });
});

// ---- anon ----------------------------------------------------------------------------------

describe('RLS: anon', () => {
  it('anon is denied on profiles and next_of_kin', async () => {
    await expectDenied('anon', (tx) => tx`select * from public.profiles`, 'anon select profiles');
    await expectDenied('anon', (tx) => tx`select * from public.next_of_kin`, 'anon select next_of_kin');
    await expectDenied('anon', (tx) => tx`update public.profiles set bio = 'x'`, 'anon update profiles');
    await expectDenied(
      'anon',
      (tx) =>
        tx`insert into public.next_of_kin (user_id, first_name, last_name, phone, address, relationship)
                 values (${a.id}, 'A', 'B', '0800', 'X', 'Y')`,
      'anon insert next_of_kin',
    );
  });

  it('anon sees no row of any table in schema public (0 rows or denied)', async () => {
    const offenders: string[] = [];
    for (const t of await tables(['public'])) {
      if (ANON_READABLE_TABLES.includes(t.name)) continue;
      const failure = await failureOf(async () => {
        const rows = await asAnonSql((tx) => tx.unsafe(`select count(*)::int as n from public.${ident(t.name)}`));
        const n = (rows as unknown as { n: number }[])[0]?.n ?? 0;
        if (n > 0) offenders.push(`public.${t.name}: anon sees ${n} rows`);
      });
      if (failure && failure.code !== '42501') offenders.push(`public.${t.name}: ${failure.code} ${failure.message}`);
    }
    expect(offenders, offenders.join('\n')).toEqual([]);
  });
});

// ---- schema private ------------------------------------------------------------------------

describe('schema private is closed to the API roles', () => {
  it('the named internals are denied to authenticated and anon', async () => {
    for (const table of ['users', 'sessions', 'otps', 'refresh_tokens', 'sms_outbox', 'admins', 'admin_audit']) {
      for (const as of [a.id, 'anon']) {
        await expectDenied(
          as,
          (tx) => tx.unsafe(`select * from private.${ident(table)} limit 1`),
          `${as} select private.${table}`,
        );
      }
    }
    await expectDenied(
      a.id,
      (tx) => tx`update private.users set password_hash = 'x' where id = ${a.id}`,
      'update own password hash',
    );
    await expectDenied(
      a.id,
      (tx) => tx`select private.create_session(${a.id}::uuid, 'hash'::text, 3600)`,
      'execute private.create_session',
    );
    await expectDenied(
      'anon',
      (tx) => tx`select private.create_session(${a.id}::uuid, 'hash'::text, 3600)`,
      'anon create_session',
    );
  });

  it('every table of schema private: select, insert, update and delete are denied to both roles', async () => {
    const list = await tables(['private']);
    expect(list.map((t) => t.name)).toEqual(expect.arrayContaining(['users', 'sessions', 'otps']));
    const offenders: string[] = [];
    for (const t of list) {
      const name = `private.${ident(t.name)}`;
      for (const as of [a.id, 'anon']) {
        const who = as === 'anon' ? 'anon' : 'authenticated';
        for (
          const stmt of [
            `select * from ${name} limit 1`,
            `delete from ${name}`,
            `update ${name} set ${ident(t.first_column)} = ${ident(t.first_column)}`,
            `insert into ${name} default values`,
          ]
        ) {
          const f = await failureOf(() => (as === 'anon'
            ? asAnonSql((tx) => tx.unsafe(stmt))
            : asUserSql(as, (tx) => tx.unsafe(stmt)))
          );
          if (!f || f.code !== '42501') {
            offenders.push(`${who}: ${stmt} -> ${f ? `${f.code} ${f.message}` : 'succeeded'}`);
          }
        }
      }
    }
    expect(offenders, offenders.join('\n')).toEqual([]);
  });

  it('no function of schema private can be called by authenticated or anon', async () => {
    const list = await functions(['private']);
    expect(list.map((f) => f.name)).toEqual(
      expect.arrayContaining(['create_session', 'create_account', 'reset_password']),
    );
    const offenders: string[] = [];
    for (const f of list) {
      if (f.kind === 'a' || f.kind === 'w') continue; // aggregates / window functions are not called like this
      if (EXECUTABLE_BY_API_ROLES[f.signature]) continue;
      for (const as of [a.id, 'anon']) {
        const stmt = callWithNulls(f);
        const failure = await failureOf(() => (as === 'anon'
          ? asAnonSql((tx) => tx.unsafe(stmt))
          : asUserSql(as, (tx) => tx.unsafe(stmt)))
        );
        if (!failure || failure.code !== '42501') {
          offenders.push(
            `${as === 'anon' ? 'anon' : 'authenticated'}: ${stmt} -> ${
              failure ? `${failure.code} ${failure.message}` : 'ran'
            }`,
          );
        }
      }
    }
    expect(offenders, offenders.join('\n')).toEqual([]);
  });
});

// ---- catalog-wide checks -------------------------------------------------------------------

describe('catalog: every table and function is protected', () => {
  it('every table in schemas public and private has row-level security enabled', async () => {
    const list = await tables(['public', 'private']);
    expect(list.length).toBeGreaterThanOrEqual(9);
    const offenders = list.filter((t) => !t.rls).map((t) => `${t.schema}.${t.name}`);
    expect(offenders, `tables without RLS:\n${offenders.join('\n')}`).toEqual([]);
  });

  it('every table in schema public has at least one policy (RLS on with no policy hides the table silently)', async () => {
    const rows = await testDb()<{ name: string }[]>`
      select c.relname as name
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'p')
         and not exists (select 1 from pg_policy p where p.polrelid = c.oid)`;
    const offenders = rows.map((r) => `public.${r.name}`);
    expect(offenders, `tables without a policy:\n${offenders.join('\n')}`).toEqual([]);
  });

  it('no function in schemas public and private is executable by anon or authenticated unless intended', async () => {
    const list = await functions(['public', 'private']);
    expect(list.length).toBeGreaterThan(0);
    const offenders = list
      .filter((f) => !EXECUTABLE_BY_API_ROLES[f.signature] && (f.anon || f.authenticated))
      .map((f) =>
        `${f.signature}: executable by ${
          [f.anon && 'anon', f.authenticated && 'authenticated'].filter(Boolean).join(' and ')
        }`
      );
    expect(offenders, `functions the API roles may execute (has_function_privilege):\n${offenders.join('\n')}`).toEqual(
      [],
    );
  });

  it('the API roles have no privilege at all on schema private', async () => {
    const [row] = await testDb()<
      { anon_usage: boolean; auth_usage: boolean; anon_create: boolean; auth_create: boolean }[]
    >`
      select has_schema_privilege('anon', 'private', 'USAGE') as anon_usage,
             has_schema_privilege('authenticated', 'private', 'USAGE') as auth_usage,
             has_schema_privilege('anon', 'private', 'CREATE') as anon_create,
             has_schema_privilege('authenticated', 'private', 'CREATE') as auth_create`;
    expect(row).toEqual({ anon_usage: false, auth_usage: false, anon_create: false, auth_create: false });
  });
});
