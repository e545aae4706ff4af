import { endpoint } from '../../../shared/endpoint.ts';
import { walletResponse } from '../../../shared/schemas/money.ts';
import { getWallet } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'wallet-get',
  summary: "Reads the caller's wallet: available balance, money held in escrows and pending top-ups",
  method: 'GET',
  auth: 'user',
  response: walletResponse,
  handler: ({ user }) => getWallet(user.claims),
});
