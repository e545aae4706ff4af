// Admins (docs/disputes.md#admins, docs/security.md#admins): the grant and revoke script run as a child
// process against the test database, exactly as an operator runs it (`npm run admin:grant -- ...`);
// the append-only audit; private.admin_record; and the endpoint builder's auth 'admin', through a
// toy admin endpoint built with the real builder and run in process against the real database
// with real sessions (no admin endpoint exists yet).
import { createServer } from 'node:net';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { closeDb } from '../../shared/core/db.ts';
import { adminUser } from '../../shared/auth/session.ts';
import { endpoint } from '../../shared/core/endpoint.ts';
import { adminSession } from '../../shared/auth/session.ts';
import { adminScript } from '../support/admins.ts';
import { baseUrl, post } from '../support/api.ts';
import { failureOf, type PgFailure, testDb } from '../support/db.ts';
import { newPhone, signUp, type TestUser } from '../support/users.ts';
import { inject } from 'vitest';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';

type Tx = postgres.TransactionSql;

afterAll(() => closeDb());

// ---- helpers -------------------------------------------------------------------------------

const script = adminScript;
const grant = (phone: string, env?: Record<string, string | undefined>) => script('grant', [phone], env);
const revoke = (phone: string, env?: Record<string, string | undefined>) => script('revoke', [phone], env);

interface AuditRow {
  id: string;
  admin_id: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

const auditOf = (userId: string) =>
  testDb()<AuditRow[]>`
    select id::text, admin_id, action, target_type, target_id, details
      from private.admin_audit a where a.admin_id = ${userId} order by a.id`; // a.id: the bigint, not the text column id

const isAdmin = async (userId: string) => {
  const [row] = await testDb()<{ admin: boolean }[]>`select private.is_admin(${userId}) as admin`;
  return row?.admin;
};

/** Runs fn in a transaction that is rolled back, as the table owner (no role set) or as service_role. */
async function rolledBack<T>(as: 'owner' | 'service_role', fn: (tx: Tx) => Promise<T>): Promise<T> {
  let result: T;
  const rollback = new Error('rollback');
  try {
    await testDb().begin(async (tx) => {
      if (as === 'service_role') {
        await tx`select set_config('role', 'service_role', true),
                        set_config('request.jwt.claims', '{"role":"service_role"}', true)`;
      }
      result = await fn(tx);
      throw rollback;
    });
  } catch (err) {
    if (err !== rollback) throw err;
  }
  return result!;
}

/** A port nothing listens on (taken from the system, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

// ---- the script ------------------------------------------------------------------------------

describe('npm run admin:grant / admin:revoke', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await signUp({ first_name: 'Grace', last_name: 'Admin' });
  });

  it('grants by 0... phone, records admin.grant with who ran it, and says so', async () => {
    const local = `0${user.phone.slice(4)}`;
    const run = await grant(local);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`granting the admin right to ${user.phone}`);
    expect(run.stdout).toContain(`done: ${user.phone} is now an admin`);
    expect(run.stdout).toMatch(/database: 127\.0\.0\.1:\d+\/postgres \(DATABASE_URL\)/);
    expect(run.stdout + run.stderr).not.toContain('postgres:postgres'); // the password is never printed
    expect(await isAdmin(user.id)).toBe(true);
    const [row] = await testDb()<
      { granted_by: string }[]
    >`select granted_by from private.admins where user_id = ${user.id}`;
    expect(row?.granted_by).toMatch(/^.{1,200}$/);
    const audit = await auditOf(user.id);
    expect(audit).toEqual([
      {
        id: expect.any(String),
        admin_id: user.id,
        action: 'admin.grant',
        target_type: 'user',
        target_id: user.id,
        details: { by: row?.granted_by },
      },
    ]);
  });

  it('is idempotent: a second grant (+234 form) changes and records nothing', async () => {
    const run = await grant(user.phone);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`${user.phone} was already an admin; nothing changed`);
    expect((await auditOf(user.id)).map((r) => r.action)).toEqual(['admin.grant']);
  });

  it('revokes, recording admin.revoke with the grant it ended; a second revoke changes nothing', async () => {
    const [before] = await testDb()<{ granted_at: string; granted_by: string }[]>`
      select to_json(granted_at)#>>'{}' as granted_at, granted_by from private.admins where user_id = ${user.id}`;
    const run = await revoke(user.phone);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`done: ${user.phone} is no longer an admin`);
    expect(await isAdmin(user.id)).toBe(false);
    const audit = await auditOf(user.id);
    expect(audit.map((r) => r.action)).toEqual(['admin.grant', 'admin.revoke']);
    expect(audit[1]).toMatchObject({ target_type: 'user', target_id: user.id });
    expect(audit[1]?.details).toEqual({
      by: before?.granted_by,
      granted_at: before?.granted_at,
      granted_by: before?.granted_by,
    });

    const again = await revoke(`0${user.phone.slice(4)}`);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`${user.phone} was not an admin; nothing changed`);
    expect((await auditOf(user.id)).length).toBe(2);
  });

  it('an unknown phone: exit 1 with a sentence, nothing written', async () => {
    const nobody = newPhone();
    for (const run of [await grant(nobody.local), await revoke(nobody.e164)]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`error: no account has the phone ${nobody.e164}; its owner must sign up first\n`);
      expect(run.stderr).not.toMatch(/\bat .*\.ts:\d+/); // a sentence, not a stack trace
    }
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.admin_audit a join private.users u on u.id = a.admin_id
       where u.phone = ${nobody.e164}`;
    expect(n?.n).toBe(0);
  });

  it('a malformed or missing phone: exit 2 with the usage, before touching the database', async () => {
    for (const args of [['0803123456'], ['+2348031234567x'], ['2348031234567'], [], [user.phone, user.phone]]) {
      // an unreachable database: a usage error must not even try it
      const run = await script('grant', args, { DATABASE_URL: 'postgres://x:y@127.0.0.1:1/none' });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/^error: /m);
      expect(run.stderr).toContain('usage: npm run admin:grant -- <phone>');
      expect(run.stdout).toBe('');
    }
  });

  it('without DATABASE_URL it uses the local database of npm start, on PG_PORT', async () => {
    const pgPort = new URL(inject('databaseUrl')).port;
    const other = await signUp();
    const run = await grant(other.phone, { DATABASE_URL: undefined, PG_PORT: pgPort });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`database: 127.0.0.1:${pgPort}/postgres (the local database of npm start)`);
    expect(await isAdmin(other.id)).toBe(true);
    const back = await revoke(other.phone, { DATABASE_URL: undefined, PG_PORT: pgPort });
    expect(back.code, back.stderr).toBe(0);
    expect(await isAdmin(other.id)).toBe(false);
  });

  it('a local database that is not running: exit 1, saying to start it', async () => {
    const port = await closedPort();
    const run = await grant(user.phone, { DATABASE_URL: undefined, PG_PORT: String(port) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot reach the database 127.0.0.1:${port}/postgres`);
    expect(run.stderr).toContain('npm start');
  });
});

// ---- the SQL ---------------------------------------------------------------------------------

describe('the SQL functions', () => {
  it('admin_grant and admin_revoke refuse a phone that is not E.164 (ES422) and an unknown one (ES404)', async () => {
    for (const fn of ['admin_grant', 'admin_revoke']) {
      const bad = await failureOf(() =>
        rolledBack('service_role', (tx) => tx.unsafe(`select private.${fn}('08031234567', 'test')`))
      );
      expect(bad?.code, `${fn}: ${bad?.message}`).toBe('ES422');
      const unknown = await failureOf(() =>
        rolledBack('service_role', (tx) => tx.unsafe(`select private.${fn}($1, 'test')`, [newPhone().e164]))
      );
      expect(unknown?.code, `${fn}: ${unknown?.message}`).toBe('ES404');
    }
  });

  it('admin_record refuses a user who is not an admin (ES404) and writes nothing', async () => {
    const plain = await signUp();
    const f = await failureOf(() =>
      rolledBack('service_role', (tx) =>
        tx`select private.admin_record(${plain.id}, 'dispute.resolve', 'dispute',
                                              gen_random_uuid(), '{}'::jsonb)`)
    );
    expect(f?.code, f?.message).toBe('ES404');
    expect(await auditOf(plain.id)).toEqual([]);
  });

  it('admin_record appends the action for an admin and returns its id; null details are {}', async () => {
    const admin = await signUp();
    expect((await grant(admin.phone)).code).toBe(0);
    const target = crypto.randomUUID();
    const [row] = await testDb().begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      return tx<{ id: string }[]>`
        select private.admin_record(${admin.id}, 'dispute.resolve', 'dispute', ${target},
                                    '{"outcome":"split","payee_amount":1500}'::jsonb)::text as id`;
    });
    const [none] = await testDb().begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      return tx<
        { id: string }[]
      >`select private.admin_record(${admin.id}, 'dispute.look', null, null, null)::text as id`;
    });
    const audit = await auditOf(admin.id);
    expect(audit.slice(1)).toEqual([
      {
        id: row?.id,
        admin_id: admin.id,
        action: 'dispute.resolve',
        target_type: 'dispute',
        target_id: target,
        details: { outcome: 'split', payee_amount: 1500 },
      },
      { id: none?.id, admin_id: admin.id, action: 'dispute.look', target_type: null, target_id: null, details: {} },
    ]);
  });

  it('a revoke waits for an admin action in flight, and the action is recorded', async () => {
    const admin = await signUp();
    expect((await grant(admin.phone)).code).toBe(0);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let recorded!: () => void;
    const inside = new Promise<void>((r) => (recorded = r));
    const action = testDb().begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      await tx`select private.admin_record(${admin.id}, 'dispute.resolve', 'dispute', gen_random_uuid(), '{}')`;
      recorded();
      await held; // the action's transaction is still open
    });
    await inside;
    const revoking = testDb().begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      const [r] = await tx<{ changed: boolean }[]>`select private.admin_revoke(${admin.phone}, 'test') as changed`;
      return r?.changed;
    });
    // the revoke is waiting on the admin's row lock
    for (let i = 0;; i++) {
      const [w] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where wait_event_type = 'Lock' and query like '%admin_revoke%' and pid <> pg_backend_pid()`;
      if (w?.n === 1) break;
      expect(i, 'the revoke never waited for the action').toBeLessThan(500);
      await new Promise((r) => setTimeout(r, 10));
    }
    release();
    await action;
    expect(await revoking).toBe(true);
    expect((await auditOf(admin.id)).map((r) => r.action)).toEqual(['admin.grant', 'dispute.resolve', 'admin.revoke']);
    const late = await failureOf(() =>
      rolledBack(
        'service_role',
        (tx) => tx`select private.admin_record(${admin.id}, 'dispute.resolve', null, null, '{}')`,
      )
    );
    expect(late?.code).toBe('ES404');
  });
});

describe('private.admin_audit is append-only, even for its owner', () => {
  let admin: TestUser;
  beforeAll(async () => {
    admin = await signUp();
    expect((await grant(admin.phone)).code).toBe(0);
  });

  const expectAppendOnly = (f: PgFailure | null, label: string) => {
    expect(f, `${label}: expected an error, but it succeeded`).not.toBeNull();
    expect(f!.message, label).toMatch(/admin_audit is append-only/);
    expect(f!.code, label).toBe('42501');
  };

  it('UPDATE, DELETE and TRUNCATE fail for the table owner (the triggers)', async () => {
    expectAppendOnly(
      await failureOf(() =>
        rolledBack(
          'owner',
          (tx) => tx`update private.admin_audit set action = 'admin.nothing' where admin_id = ${admin.id}`,
        )
      ),
      'owner update',
    );
    expectAppendOnly(
      await failureOf(() =>
        rolledBack('owner', (tx) => tx`delete from private.admin_audit where admin_id = ${admin.id}`)
      ),
      'owner delete',
    );
    expectAppendOnly(
      await failureOf(() => rolledBack('owner', (tx) => tx`truncate private.admin_audit`)),
      'owner truncate',
    );
  });

  it('service_role may read and insert, but has no UPDATE, DELETE or TRUNCATE privilege', async () => {
    for (
      const [label, stmt] of [
        ['update', (tx: Tx) => tx`update private.admin_audit set details = '{}' where admin_id = ${admin.id}`],
        ['delete', (tx: Tx) => tx`delete from private.admin_audit where admin_id = ${admin.id}`],
        ['truncate', (tx: Tx) => tx`truncate private.admin_audit`],
      ] as const
    ) {
      const f = await failureOf(() => rolledBack('service_role', stmt));
      expect(f, `service_role ${label}`).not.toBeNull();
      expect(f!.code, `service_role ${label}: ${f!.message}`).toBe('42501');
    }
    const rows = await rolledBack(
      'service_role',
      (tx) => tx<{ action: string }[]>`select action from private.admin_audit where admin_id = ${admin.id}`,
    );
    expect(rows.map((r) => r.action)).toEqual(['admin.grant']);
    const inserted = await rolledBack(
      'service_role',
      (tx) => tx`insert into private.admin_audit (admin_id, action) values (${admin.id}, 'test.insert') returning id`,
    );
    expect(inserted.length).toBe(1);
  });

  it('the admin grant survives intact', async () => {
    expect((await auditOf(admin.id)).map((r) => [r.action, r.target_id])).toEqual([['admin.grant', admin.id]]);
  });
});

// ---- auth 'admin' in the endpoint builder ----------------------------------------------------

describe("the endpoint builder's auth 'admin'", () => {
  const NAME = 'toy-admin-action';
  const seen: string[] = [];
  const toy = endpoint({
    name: NAME,
    method: 'POST',
    auth: adminSession,
    body: z.strictObject({ note: z.string().min(3) }),
    handler: async ({ user, body }) => {
      seen.push(user.id);
      return { admin_id: user.id, note: body.note };
    },
  });
  const url = `http://127.0.0.1/functions/v1/${NAME}`;
  const call = (opts: { token?: string; body?: string; method?: string; query?: string } = {}) =>
    toy(
      new Request(`${url}${opts.query ?? ''}`, {
        method: opts.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        },
        body: (opts.method ?? 'POST') === 'GET' ? undefined : (opts.body ?? JSON.stringify({ note: 'hello' })),
      }),
    );

  /** What the functions server answers for a name it has no function for: status, body, headers. */
  let unknown: { status: number; body: string; headers: [string, string][] };
  const TRANSPORT = new Set(['date', 'content-length', 'vary', 'connection', 'keep-alive', 'transfer-encoding']);
  const shape = async (res: Response) => ({
    status: res.status,
    body: await res.text(),
    headers: [...res.headers].filter(([k]) => !TRANSPORT.has(k)).sort(),
  });

  let admin: TestUser;
  let plain: TestUser;
  beforeAll(async () => {
    const res = await fetch(`${baseUrl()}/${NAME}`, { method: 'POST', body: '{}' });
    unknown = await shape(res);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({
      success: false,
      status: 404,
      code: 'function_not_found',
      error: `No function named ${NAME}`,
    });
    [admin, plain] = await Promise.all([signUp(), signUp()]);
    expect((await grant(admin.phone)).code).toBe(0);
  });

  it('meta says auth admin', () => {
    expect(toy.meta).toMatchObject({ name: NAME, method: 'POST', auth: 'admin', status: 200 });
  });

  it('an admin gets the handler, with ctx.user; validation and method checks apply to them', async () => {
    const ok = await call({ token: admin.accessToken });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ success: true, status: 200, data: { admin_id: admin.id, note: 'hello' } });
    expect(ok.headers.get('x-request-id')).toBeTruthy();

    const invalid = await call({ token: admin.accessToken, body: JSON.stringify({ note: 'x', extra: 1 }) });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { details: { field: string }[] }).details.map((d) => d.field).sort()).toEqual([
      'extra',
      'note',
    ]);
    const wrongMethod = await call({ token: admin.accessToken, method: 'GET' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('no token, a bad token, a non-admin: the 404 of a function that does not exist, whatever the body', async () => {
    const before = seen.length;
    const attempts: [string, Parameters<typeof call>[0]][] = [
      ['no token', {}],
      ['no token, bad body', { body: '{"nope":' }],
      ['a forged token', { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' }],
      ['a non-admin, valid body', { token: plain.accessToken }],
      ['a non-admin, invalid body', { token: plain.accessToken, body: JSON.stringify({ note: 'x', extra: true }) }],
      ['a non-admin, not JSON', { token: plain.accessToken, body: 'not json' }],
      ['a non-admin, wrong method', { token: plain.accessToken, method: 'GET' }],
      ['a non-admin, a query string', { token: plain.accessToken, query: '?limit=abc' }],
      ['a non-admin, a body over 1 MiB', { token: plain.accessToken, body: 'x'.repeat(1024 * 1024 + 10) }],
    ];
    for (const [label, opts] of attempts) {
      expect(await shape(await call(opts)), label).toEqual(unknown);
    }
    expect(seen.length, 'the handler never ran').toBe(before);
  });

  it('answers a preflight like every function (CORS needs it; it carries no token)', async () => {
    const res = await toy(new Request(url, { method: 'OPTIONS' }));
    expect(res.status).toBe(204);
  });

  it('adminUser: the caller for an admin, null for anyone else', async () => {
    const req = (token?: string) =>
      new Request(url, { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect(await adminUser(req(admin.accessToken))).toMatchObject({ id: admin.id, phone: admin.phone });
    expect(await adminUser(req(plain.accessToken))).toBeNull();
    expect(await adminUser(req())).toBeNull();
    expect(await adminUser(req('not-a-jwt'))).toBeNull();
  });

  it('a revoke takes effect at the next request, with the same token; a new grant restores it', async () => {
    const other = await signUp();
    expect((await grant(other.phone)).code).toBe(0);
    expect((await call({ token: other.accessToken })).status).toBe(200);
    expect((await revoke(other.phone)).code).toBe(0);
    expect(await shape(await call({ token: other.accessToken }))).toEqual(unknown);
    expect((await grant(other.phone)).code).toBe(0);
    expect((await call({ token: other.accessToken })).status).toBe(200);
  });

  it('an admin whose session ended (logout) gets the 404, as if no token', async () => {
    const other = await signUp();
    expect((await grant(other.phone)).code).toBe(0);
    expect((await call({ token: other.accessToken })).status).toBe(200);
    const out = await post(authLogout, undefined, { method: 'POST', token: other.accessToken });
    expect(out.status).toBe(200);
    expect(await shape(await call({ token: other.accessToken }))).toEqual(unknown);
  });
});
