import { endpoint } from '../../../shared/core/endpoint.ts';
import { LOGIN_FAILED, OTP_INVALID } from '../../../shared/auth/refusals.ts';
import { authVerify } from '../../../shared/auth/flows.ts';
import { verifyBody, verifyResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-verify',
  summary:
    'Checks a one-time code: for sign-up it verifies the phone; for login (with the password) it opens a session',
  refusals: [OTP_INVALID, LOGIN_FAILED],
  method: 'POST',
  auth: 'none',
  body: verifyBody,
  response: verifyResponse,
  handler: ({ body }) => authVerify(body),
});
