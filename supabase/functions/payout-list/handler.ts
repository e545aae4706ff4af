import { endpoint } from '../../../shared/endpoint.ts';
import { listPayoutAccounts } from '../../../shared/instruments.ts';

export default endpoint({
  name: 'payout-list',
  method: 'GET',
  auth: 'user',
  handler: ({ user }) => listPayoutAccounts(user.claims),
});
