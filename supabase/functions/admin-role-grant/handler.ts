import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminRoleGrant, ROLE_GRANT_REFUSALS } from '../../../shared/operators/roles.ts';
import { adminRoleGrantBody, pendingApproval } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-role-grant',
  summary: 'Asks for an operator role to be granted to a user: always waits for a second admin',
  description:
    'Admins with a second-factor pass (to anyone who is not an operator the function does not exist). Every grant ' +
    'is a four-eyes action: this answers 202 with a pending approval, and the role is granted when another admin ' +
    'who has held the admin role for 24 hours approves it (admin-approval-decide); its tenure counts from then. The ' +
    'user must be at KYC tier 3 with a NIN and a BVN bound to the account, both now and when it is approved. Asking ' +
    'again while it is pending answers the same approval.',
  refusals: [...ROLE_GRANT_REFUSALS],
  method: 'POST',
  status: 202,
  auth: operatorMode(['admin']),
  idempotent: false,
  repeat: 'answers the same pending approval while it waits',
  body: adminRoleGrantBody,
  response: pendingApproval,
  handler: ({ user, body }) => adminRoleGrant(user, body),
});
