import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import {
  INSUFFICIENT_FUNDS,
  PAYOUT_ACCOUNT_NOT_FOUND,
  PAYOUT_ACCOUNT_REQUIRED,
  TRANSFER_REFUSED,
} from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { transactionResponse, walletWithdrawBody } from '../../../shared/money/schema.ts';
import { walletWithdraw } from '../../../shared/money/wallet.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'wallet-withdraw',
  summary: 'Withdraws from the wallet to a saved payout account',
  description: "A signed-in user at KYC tier 1 or above, within the tier's single and daily limits, to " +
    '`payout_account_id` or else their default payout account. The amount leaves the wallet at once for the ' +
    'provider; a transfer the provider refuses, or that could not be asked for, fails now with the money back in ' +
    'the wallet. Otherwise the withdrawal stays pending until the provider reports it (`webhook-payments`, or the ' +
    "job's reconciliation), a failure or reversal putting the money back exactly once.",
  refusals: [
    ACCOUNT_FROZEN,
    PAYOUT_ACCOUNT_NOT_FOUND,
    PAYOUT_ACCOUNT_REQUIRED,
    INSUFFICIENT_FUNDS,
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
    TRANSFER_REFUSED,
    PROVIDER_UNAVAILABLE,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: 'provider',
  repeat: 'sends money to a bank account',
  body: walletWithdrawBody,
  response: transactionResponse,
  handler: ({ user, body }) => walletWithdraw(user, body),
});
