import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { transactionResponse, walletWithdrawBody } from '../../../shared/money/schema.ts';
import { walletWithdraw } from '../../../shared/money/wallet.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { unclassifiedRefusals } from '../../../shared/core/endpoint.ts';

export default endpoint({
  name: 'wallet-withdraw',
  summary: 'Withdraws from the wallet to a saved payout account',
  refusals: [
    ...unclassifiedRefusals({
      404: "No payout account of the caller's with this id",
      409: 'The wallet holds less than the amount',
      502: 'The transfer could not be started; the amount is back in the wallet',
      503: 'The payment provider is unavailable; nothing was sent',
    }),
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'sends money to a bank account',
  body: walletWithdrawBody,
  response: transactionResponse,
  handler: ({ user, body }) => walletWithdraw(user, body),
});
