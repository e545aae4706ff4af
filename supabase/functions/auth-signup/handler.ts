import { endpoint } from '../../../shared/endpoint.ts';
import { signup } from '../../../shared/auth/flows.ts';
import { signupBody } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-signup',
  method: 'POST',
  auth: 'none',
  status: 201,
  body: signupBody,
  handler: ({ body }) => signup(body),
});
