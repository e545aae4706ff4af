import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutList } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountListResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-list',
  summary: "Lists the caller's payout accounts, the default first",
  description: 'A signed-in user, for their own payout accounts only: the default first, then the newest, each ' +
    'account number masked but its last 4 digits. Changes nothing.',
  method: 'GET',
  auth: userSession,
  response: payoutAccountListResponse,
  handler: ({ user }) => payoutList(user),
});
