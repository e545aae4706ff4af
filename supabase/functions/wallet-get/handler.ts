import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { walletResponse } from '../../../shared/money/schema.ts';
import { walletGet } from '../../../shared/money/wallet.ts';

export default endpoint({
  name: 'wallet-get',
  summary: "Reads the caller's wallet: its balance, pending top-ups and withdrawals, and its dedicated account",
  method: 'GET',
  auth: userSession,
  response: walletResponse,
  handler: ({ user }) => walletGet(user),
});
