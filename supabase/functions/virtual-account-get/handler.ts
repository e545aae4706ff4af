import { endpoint } from '../../../shared/endpoint.ts';
import { getVirtualAccount } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'virtual-account-get',
  method: 'GET',
  auth: 'user',
  handler: ({ user }) => getVirtualAccount(user.claims),
});
