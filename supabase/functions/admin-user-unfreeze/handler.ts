import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminUserUnfreeze } from '../../../shared/operators/accounts.ts';
import { ACCOUNT_NOT_FROZEN } from '../../../shared/operators/refusals.ts';
import { adminUserActionBody, pendingApproval } from '../../../shared/operators/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'admin-user-unfreeze',
  summary: "Asks for a frozen account's unfreeze, which a second finance operator approves",
  description:
    'Operators with the finance role and a second-factor pass (to anyone else the function does not exist). Always ' +
    'four eyes: 202 with an approval, and the account is unfrozen when another finance operator who has held the ' +
    'role for 24 hours approves it (admin-approval-decide), unless it was unfrozen meanwhile (409, the approval ' +
    'stays pending). Then its withdrawals work again and the job sends the payouts it held ' +
    '(docs/money.md#frozen-accounts); audited as `approval.request`, then `user.unfreeze` by the approver.',
  refusals: [USER_NOT_FOUND, ACCOUNT_NOT_FROZEN],
  method: 'POST',
  auth: operatorMode(['finance']),
  idempotent: true,
  repeat: 'answers the pending approval of the same unfreeze',
  body: adminUserActionBody,
  response: pendingApproval,
  alsoSucceedsWith: [{ status: 202, description: 'Always: the unfreeze waits for a second finance operator' }],
  handler: ({ user, body }) => adminUserUnfreeze(user, body),
});
