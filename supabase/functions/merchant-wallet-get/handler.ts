import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWalletGet } from '../../../shared/merchants/wallet.ts';
import { merchantWalletGetResponse } from '../../../shared/merchants/schema.ts';
import { MERCHANT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-wallet-get',
  summary: "Answers the balance of the caller's merchant wallet",
  description: "A signed-in user who owns a merchant: the merchant's wallet, which its fees on released merchant " +
    'escrows are credited to, less its withdrawals. Changes nothing.',
  refusals: [MERCHANT_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: merchantWalletGetResponse,
  handler: ({ user }) => merchantWalletGet(user),
});
