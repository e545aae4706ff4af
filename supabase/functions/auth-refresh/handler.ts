import { endpoint } from '../../../shared/core/endpoint.ts';
import { REFRESH_TOKEN_INVALID, REFRESH_TOKEN_REUSED } from '../../../shared/auth/refusals.ts';
import { authRefresh } from '../../../shared/auth/flows.ts';
import { refreshBody, sessionResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-refresh',
  summary: 'Exchanges a refresh token for a new session; the old refresh token is used up',
  refusals: [REFRESH_TOKEN_REUSED, REFRESH_TOKEN_INVALID],
  method: 'POST',
  auth: 'none',
  body: refreshBody,
  response: sessionResponse,
  handler: ({ body }) => authRefresh(body.refresh_token),
});
