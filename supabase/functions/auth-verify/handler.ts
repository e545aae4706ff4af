import { endpoint } from '../../../shared/endpoint.ts';
import { login, verifySignupCode } from '../../../shared/auth/flows.ts';
import { verifyBody, verifyResponse } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-verify',
  method: 'POST',
  auth: 'none',
  body: verifyBody,
  response: verifyResponse,
  handler: ({ body }) =>
    body.context === 'signup'
      ? verifySignupCode(body.phone, body.otp_code)
      : login(body.phone, body.otp_code, body.password as string),
});
