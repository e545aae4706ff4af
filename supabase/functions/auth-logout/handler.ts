import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { authLogout } from '../../../shared/auth/flows.ts';
import { logoutResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-logout',
  summary: "Ends the caller's session: its access and refresh tokens stop working",
  description: 'A signed-in user. Only the session of this access token ends: its refresh tokens are deleted and the ' +
    "access token is refused from then on, while other devices' sessions stay live. A repeat is refused: the " +
    'session is over.',
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'ends the session; a repeat is 401, the session is over already',
  response: logoutResponse,
  handler: ({ user }) => authLogout(user),
});
