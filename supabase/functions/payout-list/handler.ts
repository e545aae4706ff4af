import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutList } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountListResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-list',
  summary: "Lists the caller's payout accounts, the default first",
  method: 'GET',
  auth: userSession,
  response: payoutAccountListResponse,
  handler: ({ user }) => payoutList(user),
});
