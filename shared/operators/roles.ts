// Granting and revoking roles, and resetting a factor (docs/operators.md#granting-and-revoking-roles,
// docs/operators.md#resetting-a-factor). A grant and a reset always wait for a second admin (four
// eyes): the endpoint checks what it can and answers 202 with the approval; the FourEyesAction
// re-checks and performs it when another admin approves (admin-approval-decide). A revoke is direct.
import { asService, type Tx } from '../core/db.ts';
import type { Reply } from '../core/endpoint.ts';
import { USER_NOT_FOUND } from '../reviews/refusals.ts';
import type { OperatorCaller } from './auth.ts';
import { type FourEyesAction, requestApproval } from './approvals.ts';
import { recordAudit } from './audit.ts';
import type { OperatorRole } from './enums.ts';
import {
  LAST_ADMIN,
  OPERATOR_IDENTITY_UNBOUND,
  OPERATOR_NOT_FOUND,
  OPERATOR_ROLE_HELD,
  OPERATOR_ROLE_NOT_HELD,
  OPERATOR_TIER_REQUIRED,
  ROLE_GRANT_PENDING,
} from './refusals.ts';
import type { AdminRoleRevokeResponse, ApprovalResponse, RoleGranted } from './schema.ts';

/** Only admins grant, revoke and reset, and so only admins approve those. */
const ADMIN_ONLY = ['admin'] as const satisfies readonly OperatorRole[];

export const ROLE_GRANT_REFUSALS = [
  USER_NOT_FOUND,
  ROLE_GRANT_PENDING,
  OPERATOR_ROLE_HELD,
  OPERATOR_TIER_REQUIRED,
  OPERATOR_IDENTITY_UNBOUND,
] as const;
export const ROLE_REVOKE_REFUSALS = [USER_NOT_FOUND, OPERATOR_ROLE_NOT_HELD, LAST_ADMIN, OPERATOR_NOT_FOUND] as const;
export const FACTOR_RESET_REFUSALS = [USER_NOT_FOUND, OPERATOR_NOT_FOUND] as const;

interface GrantParams {
  user_id: string;
  role: OperatorRole;
}

/** role.grant: the target at tier 3 with NIN and BVN bound, granted by the approving admin, from now. */
export const ROLE_GRANT: FourEyesAction<GrantParams, RoleGranted> = {
  action: 'role.grant',
  endpoint: 'admin-role-grant',
  roles: ADMIN_ONLY,
  targetType: 'user',
  targetOf: (p) => p.user_id,
  refusals: ROLE_GRANT_REFUSALS,
  async perform(tx, operator, params, reason, _prepared, approvalId) {
    const [row] = await tx<{ user_id: string; role: OperatorRole; granted_at: string; granted_by: string }[]>`
      select user_id, role, granted_at, granted_by
        from private.operator_grant_to(${params.user_id}, ${params.role}, ${operator.id})`;
    await recordAudit(tx, operator, {
      action: 'role.grant',
      roles: ADMIN_ONLY,
      targetType: 'user',
      targetId: params.user_id,
      reason,
      facts: { role: params.role, approval_id: approvalId ?? null },
    });
    return {
      user_id: row!.user_id,
      role: row!.role,
      granted_at: row!.granted_at,
      granted_by: row!.granted_by,
    };
  },
};

/** factor.reset: forgets the operator's TOTP factor and ends their passes; enrolment opens for 24 hours. */
export const FACTOR_RESET: FourEyesAction<{ user_id: string }, { user_id: string; reset_at: string }> = {
  action: 'factor.reset',
  endpoint: 'admin-totp-reset',
  roles: ADMIN_ONLY,
  targetType: 'user',
  targetOf: (p) => p.user_id,
  refusals: FACTOR_RESET_REFUSALS,
  async perform(tx, operator, params, reason, _prepared, approvalId) {
    const status = await checkOperator(tx, params.user_id);
    await recordAudit(tx, operator, {
      action: 'factor.reset',
      roles: ADMIN_ONLY,
      targetType: 'user',
      targetId: params.user_id,
      reason,
      facts: { factor_status: status, approval_id: approvalId ?? null },
    });
    const [row] = await tx<{ now: string }[]>`
      select private.operator_factor_reset(${params.user_id}), now() as now`;
    return { user_id: params.user_id, reset_at: row!.now };
  },
};

/** The user is an operator (404 user_not_found, 404 operator_not_found), their row locked; their factor's status. */
async function checkOperator(tx: Tx, userId: string): Promise<string> {
  const [user] = await tx<{ operator: boolean; factor: string | null }[]>`
    select exists (select 1 from private.operators o where o.user_id = u.id) as operator,
           (select f.status from private.operator_factors f where f.user_id = u.id) as factor
      from private.users u where u.id = ${userId} for update`;
  if (!user) throw USER_NOT_FOUND.error({});
  if (!user.operator) throw OPERATOR_NOT_FOUND.error({});
  return user.factor ?? 'none';
}

/** admin-role-grant: checks the grant, then waits for a second admin (202 with the approval). */
export async function adminRoleGrant(
  op: OperatorCaller,
  body: { user_id: string; role: OperatorRole; reason: string },
): Promise<Reply<{ approval: ApprovalResponse }>> {
  await asService(async (tx) => {
    await tx`select private.operator_grant_check(${body.user_id}, ${body.role})`;
    const [other] = await tx<{ id: string; role: OperatorRole }[]>`
      select id, params->>'role' as role from private.approvals
       where action = ${ROLE_GRANT.action} and target_id = ${body.user_id} and status = 'pending'
         and expires_at > now() and params->>'role' <> ${body.role}`;
    if (other) throw ROLE_GRANT_PENDING.error({ role: other.role, approval_id: other.id });
  });
  return requestApproval(ROLE_GRANT, op, { user_id: body.user_id, role: body.role }, body.reason, null);
}

/** admin-totp-reset: checks the user is an operator, then waits for a second admin (202). */
export async function adminTotpReset(
  op: OperatorCaller,
  body: { user_id: string; reason: string },
): Promise<Reply<{ approval: ApprovalResponse }>> {
  await asService((tx) => checkOperator(tx, body.user_id));
  return requestApproval(FACTOR_RESET, op, { user_id: body.user_id }, body.reason, null);
}

/** admin-role-revoke: takes the role now (never the last admin's), audited role.revoke in the same SQL. */
export function adminRoleRevoke(
  op: OperatorCaller,
  body: { user_id: string; role: OperatorRole; reason: string },
): Promise<AdminRoleRevokeResponse> {
  return asService(async (tx) => {
    const [ended] = await tx<{ granted_at: string }[]>`
      select granted_at from private.operator_revoke_from(${body.user_id}, ${body.role}, ${op.id}, ${body.reason})`;
    const [left] = await tx<{ roles: OperatorRole[] }[]>`select private.operator_roles(${body.user_id}) as roles`;
    return { user_id: body.user_id, role: body.role, granted_at: ended!.granted_at, roles: left!.roles };
  });
}
