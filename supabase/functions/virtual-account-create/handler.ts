import { endpoint } from '../../../shared/endpoint.ts';
import { virtualAccountResponse } from '../../../shared/schemas/money.ts';
import { createVirtualAccount } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'virtual-account-create',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  response: virtualAccountResponse,
  handler: ({ user }) => createVirtualAccount(user),
});
