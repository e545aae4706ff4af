import { endpoint } from '../../../shared/endpoint.ts';
import { resetPassword } from '../../../shared/auth/flows.ts';
import { resetPasswordBody, resetPasswordResponse } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-reset-password',
  summary: 'Sets a new password with a reset code and ends every session of the account',
  method: 'POST',
  auth: 'none',
  body: resetPasswordBody,
  response: resetPasswordResponse,
  handler: ({ body }) => resetPassword(body.phone, body.otp_code, body.password),
});
