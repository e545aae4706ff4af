import { endpoint } from '../../../shared/endpoint.ts';
import { listPayoutAccounts } from '../../../shared/instruments.ts';
import { payoutAccountListResponse } from '../../../shared/schemas/money.ts';

export default endpoint({
  name: 'payout-list',
  method: 'GET',
  auth: 'user',
  response: payoutAccountListResponse,
  handler: ({ user }) => listPayoutAccounts(user.claims),
});
