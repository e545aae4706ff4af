import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminRoleRevoke, ROLE_REVOKE_REFUSALS } from '../../../shared/operators/roles.ts';
import { adminRoleRevokeBody, adminRoleRevokeResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-role-revoke',
  summary: "Revokes one of a user's operator roles, at once",
  description:
    'Admins with a second-factor pass (to anyone who is not an operator the function does not exist). Direct, no ' +
    'second operator: the role ends now (an action of that operator in flight finishes first), and their next ' +
    'request without a role that allows it is refused; without any role left they are no longer an operator. The ' +
    'only admin cannot lose the admin role. Audited as role.revoke with the grant it ended.',
  refusals: [...ROLE_REVOKE_REFUSALS],
  method: 'POST',
  auth: operatorMode(['admin']),
  idempotent: true,
  repeat: 'revokes the role (a second revoke without the key: 409 operator_role_not_held)',
  body: adminRoleRevokeBody,
  response: adminRoleRevokeResponse,
  handler: ({ user, body }) => adminRoleRevoke(user, body),
});
