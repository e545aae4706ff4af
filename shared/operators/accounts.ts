// Operator actions on a user's account (docs/operators.md#freezing-and-unfreezing,
// docs/operators.md#ending-a-users-sessions): freeze it (finance, at once), unfreeze it (finance,
// always with a second operator: the FourEyesAction USER_UNFREEZE), end every session of it
// (support). Each writes its audit row in the transaction of what it does. The freeze itself is
// private.user_freeze / private.user_unfreeze (docs/money.md#frozen-accounts).
import { asService, type Tx } from '../core/db.ts';
import type { Reply } from '../core/endpoint.ts';
import { USER_NOT_FOUND } from '../reviews/refusals.ts';
import type { OperatorCaller } from './auth.ts';
import { recordAudit } from './audit.ts';
import { type FourEyesAction, requestApproval } from './approvals.ts';
import { ACCOUNT_NOT_FROZEN } from './refusals.ts';
import type {
  AdminSessionRevokeResponse,
  AdminUserFreezeResponse,
  AdminUserUnfreezeResponse,
  ApprovalResponse,
} from './schema.ts';

type UserAction = { user_id: string; reason: string };

/** admin-user-freeze: freezes the account now; a frozen account stays frozen under its first freeze (changed false). */
export function adminUserFreeze(op: OperatorCaller, body: UserAction): Promise<AdminUserFreezeResponse> {
  return asService(async (tx) => {
    const [row] = await tx<{ freeze_id: string; frozen_at: Date; changed: boolean }[]>`
      select * from private.user_freeze(${body.user_id}, ${op.id}, ${body.reason})`;
    await recordAudit(tx, op, {
      action: 'user.freeze',
      roles: ['finance'],
      targetType: 'user',
      targetId: body.user_id,
      reason: body.reason,
      facts: { freeze_id: row!.freeze_id, changed: row!.changed },
    });
    return {
      user_id: body.user_id,
      frozen: true,
      frozen_at: new Date(row!.frozen_at).toISOString(),
      changed: row!.changed,
    };
  });
}

/** Whether the user exists (404 user_not_found) and is frozen now. */
async function frozenNow(tx: Tx, userId: string): Promise<boolean> {
  const [row] = await tx<{ frozen: boolean | null }[]>`
    select (select private.account_frozen(u.id)) as frozen from private.users u where u.id = ${userId}`;
  if (!row) throw USER_NOT_FOUND.error({});
  return row.frozen === true;
}

/** The unfreeze, performed when a second finance operator approves it (admin-approval-decide). */
export const USER_UNFREEZE: FourEyesAction<{ user_id: string }, AdminUserUnfreezeResponse> = {
  action: 'user.unfreeze',
  endpoint: 'admin-user-unfreeze',
  roles: ['finance'],
  targetType: 'user',
  targetOf: (p) => p.user_id,
  refusals: [USER_NOT_FOUND, ACCOUNT_NOT_FROZEN],
  async perform(tx, operator, params, reason, _prepared, approvalId) {
    // private.user_unfreeze takes the user's limit lock: the re-check sees every freeze committed
    const [row] = await tx<{ freeze_id: string | null; unfrozen_at: Date | null; changed: boolean }[]>`
      select * from private.user_unfreeze(${params.user_id}, ${operator.id}, ${reason})`;
    // unfrozen by someone else meanwhile (the SQL's idempotent answer): the approval stays pending
    if (!row?.changed) throw ACCOUNT_NOT_FROZEN.error({});
    await recordAudit(tx, operator, {
      action: 'user.unfreeze',
      roles: ['finance'],
      targetType: 'user',
      targetId: params.user_id,
      reason,
      facts: { freeze_id: row.freeze_id, approval_id: approvalId ?? null },
    });
    return { user_id: params.user_id, frozen: false, unfrozen_at: new Date(row.unfrozen_at!).toISOString() };
  },
};

/** admin-user-unfreeze: always waits for a second finance operator (202 with the approval). */
export async function adminUserUnfreeze(
  op: OperatorCaller,
  body: UserAction,
): Promise<Reply<{ approval: ApprovalResponse }>> {
  // refused at once when there is nothing to undo, rather than after a second operator's look
  if (!(await asService((tx) => frozenNow(tx, body.user_id)))) throw ACCOUNT_NOT_FROZEN.error({});
  return requestApproval(USER_UNFREEZE, op, { user_id: body.user_id }, body.reason, null);
}

/** admin-session-revoke: ends every live session of the user; their old tokens answer 401 from the next request. */
export function adminSessionRevoke(op: OperatorCaller, body: UserAction): Promise<AdminSessionRevokeResponse> {
  return asService(async (tx) => {
    const [row] = await tx<{ n: number }[]>`select private.user_sessions_end(${body.user_id}) as n`;
    await recordAudit(tx, op, {
      action: 'session.revoke',
      roles: ['support'],
      targetType: 'user',
      targetId: body.user_id,
      reason: body.reason,
      facts: { sessions_ended: row!.n },
    });
    return { user_id: body.user_id, sessions_ended: row!.n };
  });
}
