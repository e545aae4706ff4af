import { endpoint } from '../../../shared/endpoint.ts';
import { listPayoutAccounts } from '../../../shared/instruments.ts';
import { payoutAccountListResponse } from '../../../shared/schemas/money.ts';

export default endpoint({
  name: 'payout-list',
  summary: "Lists the caller's payout accounts, the default first",
  method: 'GET',
  auth: 'user',
  response: payoutAccountListResponse,
  handler: ({ user }) => listPayoutAccounts(user.claims),
});
