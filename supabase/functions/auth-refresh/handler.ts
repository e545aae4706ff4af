import { endpoint } from '../../../shared/core/endpoint.ts';
import { authRefresh } from '../../../shared/auth/flows.ts';
import { refreshBody, sessionResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-refresh',
  summary: 'Exchanges a refresh token for a new session; the old refresh token is used up',
  refusals: {
    401: 'The refresh token is unknown, already used or expired; log in again',
  },
  method: 'POST',
  auth: 'none',
  body: refreshBody,
  response: sessionResponse,
  handler: ({ body }) => authRefresh(body.refresh_token),
});
