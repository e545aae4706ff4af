import { endpoint } from '../../../shared/endpoint.ts';
import { logout } from '../../../shared/auth/flows.ts';

export default endpoint({
  name: 'auth-logout',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  handler: ({ user }) => logout(user.sessionId),
});
