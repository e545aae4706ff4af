// The operator audit and the operator gate, as the database and the server enforce them
// (docs/operators.md#the-audit, docs/security.md#operators): private.admin_audit is append-only
// for its owner and for service_role; private.operator_record refuses a non-operator and writes
// nothing; a revoke waits for an operator action in flight (the share lock) and the action is
// recorded; a non-operator, a revoked operator and a logged-out one get exactly the 404 the
// server answers for a function that does not exist, whatever they send.
import type postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseUrl, expectOk as ok, post } from '../support/api.ts';
import { failureOf, type PgFailure, testDb } from '../support/db.ts';
import { newOperator, type TestOperator } from '../support/operators.ts';
import { signUp, type TestUser } from '../support/users.ts';
import adminRoleRevoke from '../../supabase/functions/admin-role-revoke/handler.ts';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';

type Tx = postgres.TransactionSql;

const auditOf = (userId: string) =>
  testDb()<
    { id: string; action: string; target_type: string | null; target_id: string | null; reason: string | null }[]
  >`
    select a.id::text as id, action, target_type, target_id, reason
      from private.admin_audit a where a.admin_id = ${userId} order by a.id`;

/** Runs fn in a transaction that is rolled back, as the table owner (no role set) or as service_role. */
async function rolledBack<T>(as: 'owner' | 'service_role', fn: (tx: Tx) => Promise<T>): Promise<T> {
  let result: T;
  const rollback = new Error('rollback');
  try {
    await testDb().begin(async (tx) => {
      if (as === 'service_role') await tx`select set_config('role', 'service_role', true)`;
      result = await fn(tx);
      throw rollback;
    });
  } catch (err) {
    if (err !== rollback) throw err;
  }
  return result!;
}

const REASON = 'Checked the account at the customer request';

describe('private.admin_audit is append-only, even for its owner', () => {
  let op: TestOperator;
  beforeAll(async () => {
    op = await newOperator(['support']);
  });

  const expectAppendOnly = (f: PgFailure | null, label: string) => {
    expect(f, `${label}: expected an error, but it succeeded`).not.toBeNull();
    expect(f!.message, label).toMatch(/admin_audit is append-only/);
    expect(f!.code, label).toBe('42501');
  };

  it('UPDATE, DELETE and TRUNCATE fail for the table owner (the triggers)', async () => {
    expectAppendOnly(
      await failureOf(() =>
        rolledBack('owner', (tx) => tx`update private.admin_audit set reason = null where admin_id = ${op.id}`)
      ),
      'owner update',
    );
    expectAppendOnly(
      await failureOf(() => rolledBack('owner', (tx) => tx`delete from private.admin_audit where admin_id = ${op.id}`)),
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
        ['update', (tx: Tx) => tx`update private.admin_audit set details = '{}' where admin_id = ${op.id}`],
        ['delete', (tx: Tx) => tx`delete from private.admin_audit where admin_id = ${op.id}`],
        ['truncate', (tx: Tx) => tx`truncate private.admin_audit`],
      ] as const
    ) {
      const f = await failureOf(() => rolledBack('service_role', stmt));
      expect(f, `service_role ${label}`).not.toBeNull();
      expect(f!.code, `service_role ${label}: ${f!.message}`).toBe('42501');
    }
    const rows = await rolledBack(
      'service_role',
      (tx) => tx<{ action: string }[]>`select action from private.admin_audit where admin_id = ${op.id}`,
    );
    expect(rows.map((r) => r.action)).toEqual(['operator.grant']);
    const inserted = await rolledBack(
      'service_role',
      (tx) => tx`insert into private.admin_audit (admin_id, action) values (${op.id}, 'test.insert') returning id`,
    );
    expect(inserted.length).toBe(1);
    expect((await auditOf(op.id)).map((r) => r.action)).toEqual(['operator.grant']);
  });
});

describe('private.operator_record', () => {
  const record = (tx: Tx, who: string, roles: string[] | null, action = 'user.read') =>
    tx<{ id: string }[]>`
      select private.operator_record(${who}, ${roles}::text[], ${action}, 'user', gen_random_uuid(), ${REASON},
                                     '{"status":"active"}'::jsonb)::text as id`;

  it('refuses a non-operator (404 operator_not_found) and writes nothing', async () => {
    const plain = await signUp();
    const f = await failureOf(() => rolledBack('service_role', (tx) => record(tx, plain.id, null)));
    expect(f?.code, f?.message).toBe('ES404');
    expect(f?.message).toContain('operator_not_found');
    expect(await auditOf(plain.id)).toEqual([]);
  });

  it('refuses an operator without one of the roles; appends for one with it and returns its id', async () => {
    const op = await newOperator(['support']);
    const f = await failureOf(() => rolledBack('service_role', (tx) => record(tx, op.id, ['finance'])));
    expect(f?.code, f?.message).toBe('ES404');
    const [row] = await testDb().begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      return record(tx, op.id, ['support', 'finance']);
    });
    const audit = await auditOf(op.id);
    expect(audit.map((r) => [r.id, r.action, r.reason])).toEqual([
      [expect.any(String), 'operator.grant', null],
      [row!.id, 'user.read', REASON],
    ]);
  });

  it('a revoke waits for an operator action in flight, and the action is recorded', async () => {
    const [admin, op] = await Promise.all([newOperator(['admin']), newOperator(['finance'])]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let recorded!: () => void;
    const inside = new Promise<void>((r) => (recorded = r));
    const action = testDb().begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      await record(tx, op.id, ['finance'], 'charge.resolve');
      recorded();
      await held; // the action's transaction is still open
    });
    await inside;
    const revoking = post(adminRoleRevoke, { user_id: op.id, role: 'finance', reason: 'Moved to another team' }, {
      token: admin.accessToken,
    });
    // the revoke is waiting on the operator's row lock
    for (let i = 0;; i++) {
      const [w] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where wait_event_type = 'Lock' and query like '%operator_revoke_from%' and pid <> pg_backend_pid()`;
      if (w?.n === 1) break;
      expect(i, 'the revoke never waited for the action').toBeLessThan(500);
      await new Promise((r) => setTimeout(r, 10));
    }
    release();
    await action;
    expect(ok(await revoking).roles).toEqual([]);
    expect((await auditOf(op.id)).map((r) => r.action)).toEqual(['operator.grant', 'charge.resolve']);
    const [revoked] = await testDb()<{ action: string; target_id: string }[]>`
      select action, target_id from private.admin_audit where admin_id = ${admin.id} and action = 'role.revoke'`;
    expect(revoked).toEqual({ action: 'role.revoke', target_id: op.id });
    const late = await failureOf(() => rolledBack('service_role', (tx) => record(tx, op.id, null)));
    expect(late?.code).toBe('ES404');
  });
});

describe('the 404 of an operator endpoint', () => {
  const NAME = 'admin-role-grant';
  const TRANSPORT = new Set(['date', 'content-length', 'vary', 'connection', 'keep-alive', 'transfer-encoding']);
  const shape = async (res: Response) => ({
    status: res.status,
    body: await res.text(),
    headers: [...res.headers].filter(([k]) => !TRANSPORT.has(k) && k !== 'x-request-id').sort(),
  });
  const send = (opts: { token?: string; body?: string; method?: string; query?: string } = {}, name = NAME) =>
    fetch(`${baseUrl()}/${name}${opts.query ?? ''}`, {
      method: opts.method ?? 'POST',
      headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
      body: (opts.method ?? 'POST') === 'GET' ? undefined : (opts.body ?? '{}'),
    });

  /** What the server answers for a name it has no function for, written for NAME. */
  let unknown: { status: number; body: string; headers: [string, string][] };
  let plain: TestUser;
  beforeAll(async () => {
    const ghost = 'admin-role-grantx';
    const s = await shape(await send({}, ghost));
    expect(s.status).toBe(404);
    expect(JSON.parse(s.body)).toMatchObject({ code: 'function_not_found', error: `No function named ${ghost}` });
    unknown = { ...s, body: s.body.replace(ghost, NAME) };
    plain = await signUp({ tier: 3 });
  });

  it('a non-operator gets it whatever the method, body and size', async () => {
    const valid = JSON.stringify({ user_id: plain.id, role: 'admin', reason: 'Please make me an admin now' });
    const attempts: [string, Parameters<typeof send>[0]][] = [
      ['no token', {}],
      ['no token, bad body', { body: '{"nope":' }],
      ['a forged token', { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' }],
      ['a non-operator, valid body', { token: plain.accessToken, body: valid }],
      ['a non-operator, invalid body', { token: plain.accessToken, body: '{"user_id":"x","extra":true}' }],
      ['a non-operator, not JSON', { token: plain.accessToken, body: 'not json' }],
      ['a non-operator, wrong method', { token: plain.accessToken, method: 'GET' }],
      ['a non-operator, DELETE', { token: plain.accessToken, method: 'DELETE' }],
      ['a non-operator, a query string', { token: plain.accessToken, query: '?limit=abc' }],
      ['a non-operator, a body over 1 MiB', { token: plain.accessToken, body: 'x'.repeat(1024 * 1024 + 10) }],
    ];
    for (const [label, opts] of attempts) expect(await shape(await send(opts)), label).toEqual(unknown);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.approvals where requested_by = ${plain.id} or target_id = ${plain.id}`;
    expect(n?.n).toBe(0);
  });

  it('a revoked operator gets it with the same token', async () => {
    const [admin, op] = await Promise.all([newOperator(['admin']), newOperator(['support'])]);
    const probe = () => send({ token: op.accessToken, body: '{}' });
    expect((await probe()).status).toBe(403); // an operator: refused for the role, not hidden
    ok(
      await post(adminRoleRevoke, { user_id: op.id, role: 'support', reason: 'Left the company on Friday' }, {
        token: admin.accessToken,
      }),
    );
    expect(await shape(await probe())).toEqual(unknown);
  });

  it('a logged-out operator gets it with the same token', async () => {
    const op = await newOperator(['admin']);
    expect((await send({ token: op.accessToken, body: '{}' })).status).toBe(400); // let in, then validated
    ok(await post(authLogout, undefined, { token: op.accessToken }));
    expect(await shape(await send({ token: op.accessToken, body: '{}' }))).toEqual(unknown);
  });
});
