import { endpoint } from '../../../shared/endpoint.ts';
import { transactionResponse, walletWithdrawBody } from '../../../shared/schemas/money.ts';
import { withdraw } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'wallet-withdraw',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: walletWithdrawBody,
  response: transactionResponse,
  handler: ({ user, body }) => withdraw(user, body),
});
