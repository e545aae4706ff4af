import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { walletResponse } from '../../../shared/money/schema.ts';
import { walletGet } from '../../../shared/money/wallet.ts';

export default endpoint({
  name: 'wallet-get',
  summary: "Reads the caller's wallet: its balance, pending top-ups and withdrawals, and its dedicated account",
  description: 'A signed-in user, about their own wallet: the balance from the ledger, the sums of pending top-ups ' +
    'and of pending withdrawals, and the dedicated account (null until asked for). Changes nothing.',
  method: 'GET',
  auth: userSession,
  response: walletResponse,
  handler: ({ user }) => walletGet(user),
});
