// Four eyes through the real HTTP server (docs/operators.md#four-eyes): a role grant and a factor
// reset wait for a second admin, who approves (and so performs) or rejects them with
// admin-approval-decide; who may decide (not the first, the role held 24 hours), expiry, re-checks
// that leave the approval pending, ten approvals racing; the direct revoke; the approvals list and
// the audit list, and who may read the audit.
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { type ApiResult, expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { failureOf, testDb } from '../support/db.ts';
import { bindIdentity, enrol, grantRoles, newOperator, type Role, verifyCode } from '../support/operators.ts';
import { signUp, type TestUser } from '../support/users.ts';
import adminApprovalDecide from '../../supabase/functions/admin-approval-decide/handler.ts';
import adminApprovalList from '../../supabase/functions/admin-approval-list/handler.ts';
import adminAuditList from '../../supabase/functions/admin-audit-list/handler.ts';
import adminRoleGrant from '../../supabase/functions/admin-role-grant/handler.ts';
import adminRoleRevoke from '../../supabase/functions/admin-role-revoke/handler.ts';
import adminTotpReset from '../../supabase/functions/admin-totp-reset/handler.ts';

const REASON = 'Joins the finance desk from Monday';
const DECIDE = 'Checked with the head of operations';

/** An operator whose roles were granted 25 hours ago (so may approve), with a pass. */
async function senior(roles: Role[] = ['admin']) {
  const op = await newOperator(roles);
  await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${op.id}`;
  return op;
}

/** A tier-3 user with NIN and BVN bound: may be granted a role. */
async function eligible(): Promise<TestUser> {
  const u = await signUp({ first_name: 'Chidi', last_name: 'Grantee', tier: 3 });
  await bindIdentity(u.id);
  return u;
}

const grant = (by: TestUser, userId: string, role: Role = 'finance') =>
  post(adminRoleGrant, { user_id: userId, role, reason: REASON }, { token: by.accessToken });

const decide = (by: TestUser, approvalId: string, decision: 'approve' | 'reject' = 'approve') =>
  post(adminApprovalDecide, { approval_id: approvalId, decision, reason: DECIDE }, { token: by.accessToken });

async function requested(by: TestUser, userId: string, role: Role = 'finance'): Promise<string> {
  return ok(await grant(by, userId, role), 202).approval.id;
}

const rolesOf = async (userId: string) =>
  await testDb()<{ role: string; granted_by: string; granted_at: Date }[]>`
    select role, granted_by, granted_at from private.operators where user_id = ${userId} order by role`;

const auditAbout = (targetId: string) =>
  testDb()<{ admin_id: string; action: string; reason: string | null; details: Record<string, unknown> }[]>`
    select admin_id, action, reason, details from private.admin_audit
     where target_id = ${targetId} and action <> 'operator.grant' order by id`; // not the grant script's rows

const statusOf = async (approvalId: string) =>
  (await testDb()<{ status: string }[]>`select status from private.approvals where id = ${approvalId}`)[0]?.status;

describe('admin-role-grant', () => {
  it('answers 202 with a pending approval and grants nothing yet; asking again answers the same approval', async () => {
    const [a, target] = await Promise.all([senior(), eligible()]);
    const first = ok(await grant(a, target.id), 202).approval;
    expect(first).toMatchObject({
      action: 'role.grant',
      target_type: 'user',
      target_id: target.id,
      amount: null,
      roles: ['admin'],
      status: 'pending',
      reason: REASON,
      requested_by: a.id,
      decided_by: null,
    });
    expect(new Date(first.expires_at).getTime() - new Date(first.requested_at).getTime()).toBe(24 * 3600_000);
    expect(await rolesOf(target.id)).toEqual([]);
    const again = ok(await grant(a, target.id), 202).approval;
    expect(again.id).toBe(first.id);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.approvals where target_id = ${target.id}`;
    expect(n?.n).toBe(1);
    // a grant of another role waits until this one is decided
    const other = await grant(a, target.id, 'support');
    refused(other, 409, 'role_grant_pending');
    expect(other.body.error).toContain(first.id);
  });

  it('refuses what the grant would refuse: unknown user, below tier 3, numbers not bound, a role held', async () => {
    const a = await senior();
    refused(await grant(a, crypto.randomUUID()), 404, 'user_not_found');
    const low = await signUp({ tier: 2 });
    await bindIdentity(low.id);
    const lowRes = await grant(a, low.id);
    refused(lowRes, 409, 'operator_tier_required');
    expect(lowRes.body.error).toContain('tier 2');
    const unbound = await signUp({ tier: 3 });
    await bindIdentity(unbound.id, ['nin']);
    const ub = await grant(a, unbound.id);
    refused(ub, 409, 'operator_identity_unbound');
    expect(ub.body.error).toContain('BVN');
    const holder = await eligible();
    await grantRoles(holder, ['finance']);
    refused(await grant(a, holder.id, 'finance'), 409, 'operator_role_held');
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.approvals where target_id in (${low.id}, ${unbound.id}, ${holder.id})`;
    expect(n?.n).toBe(0);
  });

  it('a non-operator gets the 404 of a missing function, whatever the body; a non-admin operator 403', async () => {
    const [plain, target, fin] = await Promise.all([signUp({ tier: 3 }), eligible(), senior(['finance'])]);
    for (const body of [{ user_id: target.id, role: 'admin', reason: REASON }, { nonsense: 1 }]) {
      const res = await post('admin-role-grant', body, { token: plain.accessToken });
      refused(res, 404, 'function_not_found');
    }
    refused(await grant(fin, target.id), 403, 'operator_role_required');
  });
});

describe('admin-approval-decide', () => {
  it('a second admin with 24 hours of tenure approves: the role is granted from now, by them, audited', async () => {
    const [a, b, target] = await Promise.all([senior(), senior(), eligible()]);
    const id = await requested(a, target.id, 'support');
    const before = Date.now();
    const approved = ok(await decide(b, id));
    expect(approved).toMatchObject({ id, status: 'approved', decided_by: b.id, decision_reason: DECIDE });
    const [row] = await rolesOf(target.id);
    expect(row).toMatchObject({ role: 'support', granted_by: b.id });
    expect(row!.granted_at.getTime()).toBeGreaterThanOrEqual(before - 2000);
    const audit = await auditAbout(target.id);
    expect(audit.map((r) => [r.action, r.admin_id])).toEqual([
      ['approval.request', a.id],
      ['approval.approve', b.id],
      ['role.grant', b.id],
    ]);
    expect(audit[2]).toMatchObject({ reason: REASON, details: { role: 'support', approval_id: id } });
    const [stored] = await testDb()<{ result: Record<string, unknown> }[]>`
      select result from private.approvals where id = ${id}`;
    expect(stored?.result).toMatchObject({ user_id: target.id, role: 'support', granted_by: b.id });

    // the grantee is an operator now: enrols within 24 hours, passes, and is let in
    refused(await get(adminApprovalList, { token: target.accessToken }), 401, 'second_factor_required');
    const secret = await enrol(target.accessToken);
    ok(await verifyCode(target.accessToken, secret));
    ok(await get(adminApprovalList, { token: target.accessToken, query: { status: 'approved' } }));
  });

  it('the operator who asked cannot decide it: 409 approval_own_action', async () => {
    const [a, target] = await Promise.all([senior(), eligible()]);
    const id = await requested(a, target.id);
    refused(await decide(a, id), 409, 'approval_own_action');
    refused(await decide(a, id, 'reject'), 409, 'approval_own_action');
    expect(await statusOf(id)).toBe('pending');
  });

  it('an admin of less than 24 hours: 403 approval_tenure_required, with when they may', async () => {
    const [a, target] = await Promise.all([senior(), eligible()]);
    const fresh = await newOperator(['admin']);
    const id = await requested(a, target.id);
    const res = await decide(fresh, id);
    refused(res, 403, 'approval_tenure_required');
    expect(res.body.error).toMatch(/admin role held for 24 hours; you may from \d{4}-/);
    expect(await statusOf(id)).toBe('pending');
    expect(await rolesOf(target.id)).toEqual([]);
  });

  it('an operator without the admin role, however long they held theirs: 403 operator_role_required', async () => {
    const [a, target, fin] = await Promise.all([senior(), eligible(), senior(['finance', 'disputes', 'support'])]);
    const id = await requested(a, target.id);
    refused(await decide(fin, id), 403, 'operator_role_required');
    expect(await statusOf(id)).toBe('pending');
  });

  it('expired (24 hours pending): 409 approval_expired; the list shows it expired', async () => {
    const [a, b, target] = await Promise.all([senior(), senior(), eligible()]);
    const id = await requested(a, target.id);
    await testDb()`update private.approvals set expires_at = now() - interval '1 second' where id = ${id}`;
    refused(await decide(b, id), 409, 'approval_expired');
    refused(await decide(b, id, 'reject'), 409, 'approval_expired');
    expect(await rolesOf(target.id)).toEqual([]);
    const expired = await allApprovals(b, 'expired');
    expect(expired.find((x) => x.id === id)?.status).toBe('expired');
    expect((await allApprovals(b, 'pending')).some((x) => x.id === id)).toBe(false);
  });

  it('rejected, then approved: 409 approval_not_pending; nothing granted; unknown id 404', async () => {
    const [a, b, c, target] = await Promise.all([senior(), senior(), senior(), eligible()]);
    const id = await requested(a, target.id);
    expect(ok(await decide(b, id, 'reject'))).toMatchObject({ status: 'rejected', decided_by: b.id });
    const res = await decide(c, id);
    refused(res, 409, 'approval_not_pending');
    expect(res.body.error).toContain('rejected');
    expect(await rolesOf(target.id)).toEqual([]);
    expect((await auditAbout(target.id)).map((r) => r.action)).toEqual(['approval.request', 'approval.reject']);
    refused(await decide(b, crypto.randomUUID()), 404, 'approval_not_found');
    // a new request after a rejection is a new approval
    expect(await requested(a, target.id)).not.toBe(id);
  });

  it('ten approvals at once: one 200, nine 409, one grant, one role.grant row', async () => {
    const [a, b, c, target] = await Promise.all([senior(), senior(), senior(), eligible()]);
    const id = await requested(a, target.id);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => decide(i % 2 ? b : c, id)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    for (const r of answers.filter((x) => x.status === 409)) refused(r, 409, 'approval_not_pending');
    expect((await rolesOf(target.id)).length).toBe(1);
    const audit = await auditAbout(target.id);
    expect(audit.filter((r) => r.action === 'role.grant').length).toBe(1);
    expect(audit.filter((r) => r.action === 'approval.approve').length).toBe(1);
  });

  it("a re-check that fails refuses with the action's refusal and leaves the approval pending", async () => {
    const [a, b, target, other] = await Promise.all([senior(), senior(), eligible(), eligible()]);
    // the tier lowered between the request and the decision
    const id = await requested(a, target.id);
    await testDb()`update private.users set kyc_tier = 2 where id = ${target.id}`;
    refused(await decide(b, id), 409, 'operator_tier_required');
    expect(await statusOf(id)).toBe('pending');
    expect(await rolesOf(target.id)).toEqual([]);
    expect((await auditAbout(target.id)).map((r) => r.action)).toEqual(['approval.request']);
    await testDb()`update private.users set kyc_tier = 3 where id = ${target.id}`;
    expect(ok(await decide(b, id)).status).toBe('approved');
    expect((await rolesOf(target.id)).map((r) => r.role)).toEqual(['finance']);

    // a binding removed between the request and the decision
    const id2 = await requested(a, other.id);
    await testDb()`delete from private.identity_bindings where user_id = ${other.id} and kind = 'bvn'`;
    refused(await decide(b, id2), 409, 'operator_identity_unbound');
    expect(await statusOf(id2)).toBe('pending');
    expect(await rolesOf(other.id)).toEqual([]);
  });

  it('a non-operator gets the 404 of a missing function, whatever the body', async () => {
    const plain = await signUp({ tier: 3 });
    for (const body of [{ approval_id: crypto.randomUUID(), decision: 'approve', reason: DECIDE }, 'x']) {
      refused(await post('admin-approval-decide', body, { token: plain.accessToken }), 404, 'function_not_found');
    }
  });
});

describe('admin-role-revoke', () => {
  const revoke = (by: TestUser, userId: string, role: Role) =>
    post(adminRoleRevoke, { user_id: userId, role, reason: 'Left the company last Friday' }, {
      token: by.accessToken,
    });

  it('revokes at once, audited role.revoke; without a role left the same token gets the 404', async () => {
    const [a, op] = await Promise.all([senior(), newOperator(['finance', 'support'])]);
    const first = ok(await revoke(a, op.id, 'finance'));
    expect(first).toMatchObject({ user_id: op.id, role: 'finance', roles: ['support'] });
    ok(await get(adminApprovalList, { token: op.accessToken }));
    expect(ok(await revoke(a, op.id, 'support')).roles).toEqual([]);
    refused(await get(adminApprovalList, { token: op.accessToken }), 404, 'function_not_found');
    const audit = (await auditAbout(op.id)).filter((r) => r.action === 'role.revoke');
    expect(audit.map((r) => [r.admin_id, r.details.role, r.details.granted_by])).toEqual([
      [a.id, 'finance', 'test'],
      [a.id, 'support', 'test'],
    ]);
  });

  it('a role not held: 409 operator_role_not_held; an unknown user 404; a non-admin 403', async () => {
    const [a, op, fin] = await Promise.all([senior(), newOperator(['support']), senior(['finance'])]);
    refused(await revoke(a, op.id, 'finance'), 409, 'operator_role_not_held');
    refused(await revoke(a, crypto.randomUUID(), 'finance'), 404, 'user_not_found');
    refused(await revoke(fin, op.id, 'support'), 403, 'operator_role_required');
    expect((await rolesOf(op.id)).map((r) => r.role)).toEqual(['support']);
  });

  it('404 operator_not_found when the revoking admin loses the role while the revoke runs; nothing is taken', async () => {
    const [a, op] = await Promise.all([newOperator(['admin']), newOperator(['support'])]);
    const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    try {
      let answer: Promise<ApiResult> | undefined;
      await sql.begin(async (tx) => {
        // the admin's rows held: the revoke passes the gate, then waits to record itself
        await tx`select 1 from private.operators where user_id = ${a.id} for update`;
        const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        answer = revoke(a, op.id, 'support');
        let waiting = 0;
        for (let i = 0; i < 100 && waiting === 0; i++) {
          const [w] = await testDb()<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
             where ${me!.pid}::int = any (pg_catalog.pg_blocking_pids(pid)) and query like '%operator_revoke_from%'`;
          waiting = w?.n ?? 0;
          if (waiting === 0) await new Promise((r) => setTimeout(r, 50));
        }
        expect(waiting).toBeGreaterThan(0);
        await tx`delete from private.operators where user_id = ${a.id}`;
      });
      refused(await answer!, 404, 'operator_not_found');
    } finally {
      await sql.end();
    }
    expect((await rolesOf(op.id)).map((r) => r.role)).toEqual(['support']);
    expect((await auditAbout(op.id)).filter((r) => r.action === 'role.revoke')).toEqual([]);
  });

  it('never the last admin: 409 last_admin (with every other admin gone, in a transaction rolled back)', async () => {
    const a = await senior();
    const f = await failureOf(() =>
      testDb().begin(async (tx) => {
        await tx`delete from private.operators where role = 'admin' and user_id <> ${a.id}`;
        await tx`select set_config('role', 'service_role', true)`;
        await tx`select private.operator_revoke_from(${a.id}, 'admin', ${a.id}, 'Leaving the service today')`;
      })
    );
    expect(f?.code, f?.message).toBe('ES409');
    expect(f?.message).toContain('last_admin');
    // with another admin there, an admin may give the role up
    const b = await senior();
    expect(ok(await revoke(b, b.id, 'admin')).roles).toEqual([]);
  });
});

describe('admin-totp-reset', () => {
  const reset = (by: TestUser, userId: string) =>
    post(adminTotpReset, { user_id: userId, reason: 'Lost the phone with the authenticator' }, {
      token: by.accessToken,
    });

  it('202; when a second admin approves, the factor and its passes are gone and enrolment is open again', async () => {
    const [a, b, op] = await Promise.all([senior(), senior(), senior(['finance'])]);
    const pending = ok(await reset(a, op.id), 202).approval;
    expect(pending).toMatchObject({ action: 'factor.reset', target_id: op.id, roles: ['admin'], status: 'pending' });
    expect(ok(await reset(a, op.id), 202).approval.id).toBe(pending.id);
    ok(await get(adminApprovalList, { token: op.accessToken })); // nothing happened yet
    expect(ok(await decide(b, pending.id)).status).toBe('approved');
    refused(await get(adminApprovalList, { token: op.accessToken }), 401, 'second_factor_required');
    const [f] = await testDb()<
      { status: string }[]
    >`select status from private.operator_factors where user_id = ${op.id}`;
    expect(f?.status).toBe('none');
    // granted 25 hours ago, but the reset opens enrolment for 24 hours
    const secret = await enrol(op.accessToken);
    ok(await verifyCode(op.accessToken, secret));
    ok(await get(adminApprovalList, { token: op.accessToken }));
    const audit = await auditAbout(op.id);
    // each ask is recorded, the repeat too (it answered the same approval)
    expect(audit.map((r) => [r.action, r.admin_id])).toEqual([
      ['approval.request', a.id],
      ['approval.request', a.id],
      ['approval.approve', b.id],
      ['factor.reset', b.id],
    ]);
    expect(audit[3]?.details).toMatchObject({ factor_status: 'active', approval_id: pending.id });
  });

  it('an unknown user 404 user_not_found; a user who is no operator 404 operator_not_found', async () => {
    const [a, plain] = await Promise.all([senior(), signUp()]);
    refused(await reset(a, crypto.randomUUID()), 404, 'user_not_found');
    refused(await reset(a, plain.id), 404, 'operator_not_found');
  });
});

type Approval = { id: string; status: string; requested_at: string };

/** Every approval the list shows (all pages), with `status` when given. */
async function allApprovals(op: TestUser, status?: string): Promise<Approval[]> {
  const out: Approval[] = [];
  let after: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = ok(
      await get(adminApprovalList, {
        token: op.accessToken,
        // deno-lint-ignore no-explicit-any
        query: { limit: 50, ...(status ? { status: status as any } : {}), ...(after ? { after } : {}) },
      }),
    ) as Approval[];
    out.push(...page);
    if (page.length < 50) return out;
    after = page[page.length - 1]!.id;
  }
  throw new Error('too many pages');
}

describe('admin-approval-list', () => {
  it('any operator reads it: pending first, each group oldest first; expired shown so; pages by after', async () => {
    const [a, b, reader] = await Promise.all([senior(), senior(), newOperator(['support'])]);
    const targets = await Promise.all([eligible(), eligible(), eligible(), eligible()]);
    const ids: string[] = [];
    for (const t of targets) ids.push(await requested(a, t.id));
    ok(await decide(b, ids[0]!, 'reject'));
    await testDb()`update private.approvals set expires_at = now() - interval '1 second' where id = ${ids[1]!}`;
    const all = await allApprovals(reader);
    const mine = all.filter((x) => ids.includes(x.id));
    expect(mine.map((x) => [x.id, x.status])).toEqual([
      [ids[2], 'pending'],
      [ids[3], 'pending'],
      [ids[0], 'rejected'],
      [ids[1], 'expired'],
    ].sort((x, y) => (x[1] === 'pending' ? 0 : 1) - (y[1] === 'pending' ? 0 : 1)));
    // every pending one comes before every other
    const firstDone = all.findIndex((x) => x.status !== 'pending');
    expect(all.slice(firstDone).every((x) => x.status !== 'pending')).toBe(true);
    const pendings = all.slice(0, firstDone === -1 ? all.length : firstDone).map((x) => x.requested_at);
    expect(pendings).toEqual([...pendings].sort());
    // a filter; pages of 1 walk the same list
    expect((await allApprovals(reader, 'rejected')).some((x) => x.id === ids[0])).toBe(true);
    const first = ok(await get(adminApprovalList, { token: reader.accessToken, query: { limit: 1 } })) as Approval[];
    const second = ok(
      await get(adminApprovalList, { token: reader.accessToken, query: { limit: 1, after: first[0]!.id } }),
    ) as Approval[];
    expect([first[0]!.id, second[0]!.id]).toEqual([all[0]!.id, all[1]!.id]);
  });

  it('a non-operator gets the 404 of a missing function', async () => {
    const plain = await signUp();
    refused(await get('admin-approval-list', { token: plain.accessToken, query: { status: 'nope' } }), 404);
  });
});

describe('admin-audit-list', () => {
  it('an admin reads it newest first, filtered and paged; the read is itself a row', async () => {
    const [a, b, target] = await Promise.all([senior(), senior(), eligible()]);
    const id = await requested(a, target.id);
    ok(await decide(b, id));
    const rows = ok(await get(adminAuditList, { token: a.accessToken, query: { target_id: target.id } }));
    expect(rows.map((r) => [r.action, r.operator_id])).toEqual([
      ['role.grant', b.id],
      ['approval.approve', b.id],
      ['approval.request', a.id],
    ]);
    expect(rows[0]).toMatchObject({ target_type: 'user', target_id: target.id, reason: REASON });
    const byAction = ok(
      await get(adminAuditList, { token: a.accessToken, query: { target_id: target.id, action: 'approval.approve' } }),
    );
    expect(byAction.map((r) => r.operator_id)).toEqual([b.id]);
    const page = ok(
      await get(adminAuditList, {
        token: a.accessToken,
        query: { target_id: target.id, after: rows[0]!.id, limit: 1 },
      }),
    );
    expect(page.map((r) => r.action)).toEqual(['approval.approve']);
    const reads = ok(
      await get(adminAuditList, { token: b.accessToken, query: { operator_id: a.id, action: 'audit.read' } }),
    );
    expect(reads.length).toBe(3);
    expect(reads[0]?.facts).toMatchObject({ target_id: target.id, after: rows[0]!.id, limit: 1, rows: 1 });
  });

  it('only admins: support, finance and disputes get 403; a non-operator the 404', async () => {
    const [op, plain] = await Promise.all([senior(['support', 'finance', 'disputes']), signUp()]);
    refused(await get(adminAuditList, { token: op.accessToken }), 403, 'operator_role_required');
    refused(await get(adminAuditList, { token: plain.accessToken }), 404, 'function_not_found');
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.admin_audit where admin_id = ${op.id} and action = 'audit.read'`;
    expect(n?.n).toBe(0);
  });
});
