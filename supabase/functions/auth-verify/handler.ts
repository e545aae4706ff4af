import { endpoint } from '../../../shared/core/endpoint.ts';
import { authVerify } from '../../../shared/auth/flows.ts';
import { verifyBody, verifyResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-verify',
  summary:
    'Checks a one-time code: for sign-up it verifies the phone; for login (with the password) it opens a session',
  refusals: {
    401: 'Login: no live login code for the phone, or the phone, code and password do not match (one answer for all)',
  },
  method: 'POST',
  auth: 'none',
  body: verifyBody,
  response: verifyResponse,
  handler: ({ body }) => authVerify(body),
});
