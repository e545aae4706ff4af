import { endpoint } from '../../../shared/core/endpoint.ts';
import { ACCOUNT_EXISTS, PHONE_NOT_VERIFIED, SIGNUP_IN_PROGRESS } from '../../../shared/auth/refusals.ts';
import { authSignup } from '../../../shared/auth/flows.ts';
import { sessionResponse, signupBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-signup',
  summary: 'Creates the account of a phone verified for sign-up, and opens a session',
  refusals: [PHONE_NOT_VERIFIED, SIGNUP_IN_PROGRESS, ACCOUNT_EXISTS],
  method: 'POST',
  auth: 'none',
  status: 201,
  body: signupBody,
  response: sessionResponse,
  handler: ({ body }) => authSignup(body),
});
