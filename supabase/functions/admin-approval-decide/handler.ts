import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminApprovalDecide } from '../../../shared/operators/decide.ts';
import { FOUR_EYES_ACTIONS } from '../../../shared/operators/four-eyes-actions.ts';
import { adminApprovalDecideBody, approvalResponse } from '../../../shared/operators/schema.ts';
import {
  APPROVAL_EXPIRED,
  APPROVAL_NOT_FOUND,
  APPROVAL_NOT_PENDING,
  APPROVAL_OWN_ACTION,
  APPROVAL_TENURE_REQUIRED,
  OPERATOR_ROLE_REQUIRED,
} from '../../../shared/operators/refusals.ts';

export default endpoint({
  name: 'admin-approval-decide',
  summary: "Approves (and so performs) or rejects another operator's action waiting for four eyes",
  description:
    'Operators only (to anyone else the function does not exist); never the operator who asked, and only one who has ' +
    'held a role that may perform the action for 24 hours. `approve` performs the action now, in the transaction ' +
    'that marks the approval approved, after re-checking the state (an action no longer possible is refused with ' +
    'its own refusal and the approval stays pending; of two approvals at once, one performs it). `reject` closes it ' +
    'without acting; an approval expires 24 hours after it was asked for, and both decisions are audited.',
  refusals: [
    APPROVAL_NOT_FOUND,
    APPROVAL_NOT_PENDING,
    APPROVAL_EXPIRED,
    APPROVAL_OWN_ACTION,
    APPROVAL_TENURE_REQUIRED,
    OPERATOR_ROLE_REQUIRED,
    // what the actions themselves refuse with when the state changed since they were asked for
    ...new Set(Object.values(FOUR_EYES_ACTIONS).flatMap((a) => a.refusals)),
  ],
  performsFor: Object.values(FOUR_EYES_ACTIONS).map((a) => a.endpoint),
  method: 'POST',
  auth: operatorMode(),
  idempotent: true,
  repeat: 'decides the approval and performs its action',
  body: adminApprovalDecideBody,
  response: approvalResponse,
  handler: ({ user, body }) => adminApprovalDecide(user, body),
});
