import { endpoint } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { authForgotPassword } from '../../../shared/auth/flows.ts';
import { forgotPasswordBody, forgotPasswordResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-forgot-password',
  summary: 'Sends a password-reset code by SMS (the answer is the same whether or not the phone is registered)',
  description: 'Anyone, without a token. A `reset` code, valid 10 minutes, is stored for the phone whether or not it ' +
    'has an account, under the rate limits of `auth-send-otp`; the SMS goes out only when it has one. Nothing else ' +
    'changes.',
  refusals: [RATE_LIMITED],
  method: 'POST',
  auth: 'none',
  body: forgotPasswordBody,
  response: forgotPasswordResponse,
  handler: ({ body, clientIp }) => authForgotPassword(body.phone, clientIp),
});
