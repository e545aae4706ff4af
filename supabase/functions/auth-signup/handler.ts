import { endpoint } from '../../../shared/endpoint.ts';
import { signup } from '../../../shared/auth/flows.ts';
import { sessionResponse, signupBody } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-signup',
  method: 'POST',
  auth: 'none',
  status: 201,
  body: signupBody,
  response: sessionResponse,
  handler: ({ body }) => signup(body),
});
