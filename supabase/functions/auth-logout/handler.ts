import { endpoint } from '../../../shared/core/endpoint.ts';
import { logout } from '../../../shared/auth/flows.ts';
import { logoutResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-logout',
  summary: "Ends the caller's session: its access and refresh tokens stop working",
  method: 'POST',
  auth: 'user',
  idempotent: false,
  response: logoutResponse,
  handler: ({ user }) => logout(user.sessionId),
});
