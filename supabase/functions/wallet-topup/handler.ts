import { endpoint } from '../../../shared/endpoint.ts';
import { walletTopupBody, walletTopupResponse } from '../../../shared/schemas/money.ts';
import { topup } from '../../../shared/wallet.ts';

export default endpoint({
  name: 'wallet-topup',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: walletTopupBody,
  response: walletTopupResponse,
  handler: ({ user, body }) => topup(user, body),
});
