import { endpoint } from '../../../shared/endpoint.ts';
import { refresh } from '../../../shared/auth/flows.ts';
import { refreshBody, sessionResponse } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-refresh',
  method: 'POST',
  auth: 'none',
  body: refreshBody,
  response: sessionResponse,
  handler: ({ body }) => refresh(body.refresh_token),
});
