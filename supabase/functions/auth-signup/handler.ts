import { endpoint } from '../../../shared/core/endpoint.ts';
import { ACCOUNT_EXISTS, PHONE_NOT_VERIFIED, SIGNUP_IN_PROGRESS } from '../../../shared/auth/refusals.ts';
import { authSignup } from '../../../shared/auth/flows.ts';
import { sessionResponse, signupBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-signup',
  summary: 'Creates the account of a phone verified for sign-up, and opens a session',
  description: 'Anyone, without a token, for a phone verified with `auth-verify` (`context: signup`) in the last 30 ' +
    'minutes; the verification is used up. Creates the account at KYC tier 0, its profile and its first session, ' +
    'and links to it every escrow that invited this phone.',
  refusals: [PHONE_NOT_VERIFIED, SIGNUP_IN_PROGRESS, ACCOUNT_EXISTS],
  method: 'POST',
  auth: 'none',
  status: 201,
  body: signupBody,
  response: sessionResponse,
  handler: ({ body }) => authSignup(body),
});
