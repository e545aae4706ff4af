import { endpoint } from '../../../shared/core/endpoint.ts';
import { LOGIN_FAILED, OTP_INVALID } from '../../../shared/auth/refusals.ts';
import { authVerify } from '../../../shared/auth/flows.ts';
import { verifyBody, verifyResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-verify',
  summary:
    'Checks a one-time code: for sign-up it verifies the phone; for login (with the password) it opens a session',
  description: 'Anyone, without a token; a code is used once, and 5 wrong tries (by default) burn it. With `context: ' +
    'signup` a good code marks the phone verified for 30 minutes, the time `auth-signup` has. With `context: ' +
    'login` the password is checked too (a wrong one spends a try) and a new session opens: an access token for an ' +
    'hour and a refresh token for 30 days.',
  refusals: [OTP_INVALID, LOGIN_FAILED],
  method: 'POST',
  auth: 'none',
  body: verifyBody,
  response: verifyResponse,
  handler: ({ body }) => authVerify(body),
});
