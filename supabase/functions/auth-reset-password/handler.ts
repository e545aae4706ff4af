import { endpoint } from '../../../shared/core/endpoint.ts';
import { OTP_INVALID } from '../../../shared/auth/refusals.ts';
import { authResetPassword } from '../../../shared/auth/flows.ts';
import { resetPasswordBody, resetPasswordResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-reset-password',
  summary: 'Sets a new password with a reset code and ends every session of the account',
  description: 'Anyone holding the `reset` code `auth-forgot-password` sent; the code is used once. Stores the new ' +
    'password and ends every live session of the account, so every device logs in again; no session is answered.',
  refusals: [OTP_INVALID],
  method: 'POST',
  auth: 'none',
  body: resetPasswordBody,
  response: resetPasswordResponse,
  handler: ({ body }) => authResetPassword(body.phone, body.otp_code, body.password),
});
