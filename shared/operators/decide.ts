// admin-approval-decide: a second operator approves (the action is performed then, in the same
// transaction) or rejects a pending approval (docs/operators.md#four-eyes).
import { asService } from '../core/db.ts';
import type { OperatorCaller } from './auth.ts';
import { approvalAnswer, type ApprovalRow, performApproved } from './approvals.ts';
import { FOUR_EYES_ACTIONS } from './four-eyes-actions.ts';
import { APPROVAL_NOT_FOUND } from './refusals.ts';
import type { ApprovalResponse } from './schema.ts';

export async function adminApprovalDecide(
  op: OperatorCaller,
  body: { approval_id: string; decision: 'approve' | 'reject'; reason: string },
): Promise<ApprovalResponse> {
  if (body.decision === 'reject') {
    const [row] = await asService((tx) =>
      tx<ApprovalRow[]>`select * from private.approval_reject(${body.approval_id}, ${op.id}, ${body.reason})`
    );
    return approvalAnswer(row!);
  }
  // the checks first, in a transaction of their own, so that nobody who may not decide it makes
  // the action ask a provider anything; approval_take checks again under the lock
  const [pending] = await asService((tx) =>
    tx<ApprovalRow[]>`select * from private.approval_lock(${body.approval_id}, ${op.id}, now())`
  );
  if (!pending) throw APPROVAL_NOT_FOUND.error({});
  const def = FOUR_EYES_ACTIONS[pending.action];
  if (!def) throw new Error(`approval ${pending.id}: no four-eyes action named ${pending.action}`);
  return approvalAnswer(await performApproved(def, op, pending, body.reason));
}
