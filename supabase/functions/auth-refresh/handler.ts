import { endpoint } from '../../../shared/core/endpoint.ts';
import { REFRESH_TOKEN_INVALID, REFRESH_TOKEN_REUSED } from '../../../shared/auth/refusals.ts';
import { authRefresh } from '../../../shared/auth/flows.ts';
import { refreshBody, sessionResponse } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-refresh',
  summary: 'Exchanges a refresh token for a new session; the old refresh token is used up',
  description: 'Anyone holding a live refresh token; no access token. Answers a new access token and refresh token ' +
    'of the same session, whose expiry moves to 30 days from now. Presenting a token that was rotated already ' +
    '(beyond a 10-second grace for two refreshes at once) ends the whole session.',
  refusals: [REFRESH_TOKEN_REUSED, REFRESH_TOKEN_INVALID],
  method: 'POST',
  auth: 'none',
  body: refreshBody,
  response: sessionResponse,
  handler: ({ body }) => authRefresh(body.refresh_token),
});
