// The role matrix of the operator API, read from the endpoints' own definitions: each role
// against each operator endpoint (who may act, and who reads the audit), and each role against
// each action that waits for four eyes (who may approve it). A role the endpoint does not admit is
// 403 operator_role_required before its body is read; one it admits gets past the role check.
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { loadEndpointMetas } from '../support/endpoints.ts';
import { newOperator, type Role, type TestOperator } from '../support/operators.ts';
import { signUp } from '../support/users.ts';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { FOUR_EYES_ACTIONS } from '../../shared/operators/four-eyes-actions.ts';
import { OPERATOR_ROLES } from '../../shared/operators/enums.ts';
import adminApprovalDecide from '../../supabase/functions/admin-approval-decide/handler.ts';

const sql = testDb();
const byRole = new Map<Role, TestOperator>();
let operatorEndpoints: EndpointMeta[] = [];

beforeAll(async () => {
  operatorEndpoints = (await loadEndpointMetas()).filter((m) => m.auth === 'operator');
  for (const role of OPERATOR_ROLES) byRole.set(role, await newOperator([role]));
  // every one of them has held their role for more than 24 hours: old enough to approve
  await sql`update private.operators set granted_at = now() - interval '25 hours'
             where user_id = any (${[...byRole.values()].map((o) => o.id)}::uuid[])`;
}, 120_000);

const refusedForRole = (status: number, body: { code?: string }) =>
  status === 403 && body?.code === 'operator_role_required';

describe('the role matrix', () => {
  it('covers the operator API: every admin-* function but the second factor is an operator endpoint', () => {
    expect(operatorEndpoints.length).toBeGreaterThanOrEqual(3);
    for (const m of operatorEndpoints) expect(m.name).toMatch(/^admin-/);
  });

  it('each role against each operator endpoint: 403 operator_role_required exactly when the role is not admitted', async () => {
    const wrong: string[] = [];
    for (const m of operatorEndpoints) {
      for (const role of OPERATOR_ROLES) {
        const admitted = m.authRoles === undefined || m.authRoles.includes(role);
        const res = await call(m.name, {
          method: m.method,
          token: byRole.get(role)!.accessToken,
          ...(m.method === 'POST' ? { body: {} } : {}),
        });
        const refused = refusedForRole(res.status, res.body as { code?: string });
        if (refused === admitted) {
          wrong.push(`${m.name} as ${role}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('a non-operator, with or without a token, gets the 404 of a missing function from every one, whatever the body', async () => {
    const user = await signUp({ tier: 3 });
    const missing = await call('admin-no-such-function', { token: user.accessToken });
    expect(missing.status).toBe(404);
    const wrong: string[] = [];
    const everyOperatorEndpoint = (await loadEndpointMetas()).filter((m) => m.name.startsWith('admin-'));
    for (const m of everyOperatorEndpoint) {
      for (const token of [user.accessToken, undefined, 'not.a.token']) {
        const tries = [
          { method: m.method },
          { method: 'GET', query: { reason: 'x'.repeat(600), user_id: 'nope' } },
          { method: 'POST', body: {} },
          { method: 'POST', rawBody: 'not json' },
          { method: 'DELETE' },
        ];
        for (const t of tries) {
          const res = await call(m.name, { token, ...t });
          const expected = { ...(missing.body as object), error: `No function named ${m.name}` };
          if (res.status !== 404 || JSON.stringify(res.body) !== JSON.stringify(expected)) {
            wrong.push(`${m.name} (${token ? 'token' : 'none'}, ${JSON.stringify(t)}): ${res.status}`);
          }
        }
      }
    }
    expect(everyOperatorEndpoint.length).toBeGreaterThanOrEqual(operatorEndpoints.length);
    expect(wrong).toEqual([]);
  });

  it('the audit is read by admins only', () => {
    const audit = operatorEndpoints.find((m) => m.name === 'admin-audit-list');
    expect(audit?.authRoles).toEqual(['admin']);
  });

  it('each role against each four-eyes action: only a role that may perform it may approve it', async () => {
    const actions = Object.values(FOUR_EYES_ACTIONS);
    expect(actions.length).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const def of actions) {
      const requester = await newOperator([def.roles[0]!]);
      for (const role of OPERATOR_ROLES) {
        // a pending approval on a target that does not exist: a decider past the role check is
        // refused by the action's own re-check, never by the role check
        const target = crypto.randomUUID();
        // whatever id the action reads, it names the missing target
        const params = {
          user_id: target,
          transaction_id: target,
          dispute_id: target,
          role: 'support',
          outcome: 'release',
        };
        const [approval] = await sql<{ id: string }[]>`
          select id from private.approval_request(${requester.id}, ${def.action}, ${def.targetType},
            ${target}::uuid, ${sql.json(params)}, null, ${[...def.roles]}::text[], 'The role matrix asks for it')`;
        const res = await call(adminApprovalDecide.meta.name, {
          token: byRole.get(role)!.accessToken,
          body: { approval_id: approval!.id, decision: 'approve', reason: 'The role matrix approves it' },
        });
        const refused = refusedForRole(res.status, res.body as { code?: string });
        if (refused === def.roles.includes(role) || res.status >= 500) {
          wrong.push(`${def.action} approved by ${role}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
        }
        await sql`update private.approvals set status = 'rejected', decided_at = now() where id = ${approval!.id}`;
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});
