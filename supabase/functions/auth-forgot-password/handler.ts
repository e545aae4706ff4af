import { endpoint } from '../../../shared/endpoint.ts';
import { forgotPassword } from '../../../shared/auth/flows.ts';
import { forgotPasswordBody, forgotPasswordResponse } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-forgot-password',
  method: 'POST',
  auth: 'none',
  body: forgotPasswordBody,
  response: forgotPasswordResponse,
  handler: ({ body, clientIp }) => forgotPassword(body.phone, clientIp),
});
