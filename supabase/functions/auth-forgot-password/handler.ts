import { endpoint } from '../../../shared/core/endpoint.ts';
import { authForgotPassword } from '../../../shared/auth/flows.ts';
import { forgotPasswordBody, forgotPasswordResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-forgot-password',
  summary: 'Sends a password-reset code by SMS (the answer is the same whether or not the phone is registered)',
  refusals: {
    429: 'Too many codes for this phone or address; the message and Retry-After say how long to wait',
  },
  method: 'POST',
  auth: 'none',
  body: forgotPasswordBody,
  response: forgotPasswordResponse,
  handler: ({ body, clientIp }) => authForgotPassword(body.phone, clientIp),
});
