import { endpoint } from '../../../shared/endpoint.ts';
import { virtualAccountResponse } from '../../../shared/schemas/money.ts';
import { getVirtualAccount } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'virtual-account-get',
  summary: "Reads the caller's dedicated top-up account",
  refusals: {
    404: 'The caller has no dedicated account yet',
  },
  method: 'GET',
  auth: 'user',
  response: virtualAccountResponse,
  handler: ({ user }) => getVirtualAccount(user.claims),
});
