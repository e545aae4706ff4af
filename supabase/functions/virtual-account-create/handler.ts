import { endpoint } from '../../../shared/endpoint.ts';
import { createVirtualAccount } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'virtual-account-create',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  handler: ({ user }) => createVirtualAccount(user),
});
