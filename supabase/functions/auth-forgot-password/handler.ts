import { endpoint } from '../../../shared/endpoint.ts';
import { forgotPassword } from '../../../shared/auth/flows.ts';
import { forgotPasswordBody } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-forgot-password',
  method: 'POST',
  auth: 'none',
  body: forgotPasswordBody,
  handler: ({ body, clientIp }) => forgotPassword(body.phone, clientIp),
});
