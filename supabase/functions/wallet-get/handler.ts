import { endpoint } from '../../../shared/endpoint.ts';
import { getWallet } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'wallet-get',
  method: 'GET',
  auth: 'user',
  handler: ({ user }) => getWallet(user.claims),
});
