import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminSessionRevoke } from '../../../shared/operators/accounts.ts';
import { adminSessionRevokeResponse, adminUserActionBody } from '../../../shared/operators/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'admin-session-revoke',
  summary: 'Ends every session of a user: their next request with a token of one of them is 401',
  description:
    'Operators with the support role and a second-factor pass (to anyone else the function does not exist). Ends ' +
    'every live session of the user as a password reset does: their access tokens are refused from the next ' +
    'request (401) and their refresh tokens deleted, so the user signs in again. Nothing else changes ' +
    '(admin-user-freeze stops money); audited as `session.revoke` with the count ended.',
  refusals: [USER_NOT_FOUND],
  method: 'POST',
  auth: operatorMode(['support']),
  idempotent: true,
  repeat: "ends the user's sessions (none left: 0 ended)",
  body: adminUserActionBody,
  response: adminSessionRevokeResponse,
  handler: ({ user, body }) => adminSessionRevoke(user, body),
});
