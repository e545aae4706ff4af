import { endpoint } from '../../../shared/core/endpoint.ts';
import { authSignup } from '../../../shared/auth/flows.ts';
import { sessionResponse, signupBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-signup',
  summary: 'Creates the account of a phone verified for sign-up, and opens a session',
  refusals: {
    409: 'An account already exists for this phone, or its sign-up is already in progress',
  },
  method: 'POST',
  auth: 'none',
  status: 201,
  body: signupBody,
  response: sessionResponse,
  handler: ({ body }) => authSignup(body),
});
