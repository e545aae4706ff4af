import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import {
  INSUFFICIENT_FUNDS,
  PAYOUT_ACCOUNT_NOT_FOUND,
  PAYOUT_ACCOUNT_REQUIRED,
  TRANSFER_REFUSED,
} from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { MERCHANT_FROZEN, MERCHANT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWithdrawBody, merchantWithdrawResponse } from '../../../shared/merchants/schema.ts';
import { merchantWithdraw } from '../../../shared/merchants/wallet.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'merchant-withdraw',
  summary: "Withdraws from the caller's merchant wallet to the owner's payout account",
  description: "A merchant's owner, within their own KYC tier's single and daily limits (counted like a withdrawal), " +
    "to `payout_account_id` or else the owner's default payout account. The amount leaves the merchant's wallet at " +
    'once for the provider; a transfer the provider refuses, or that could not be asked for, fails now with the ' +
    "money back in the merchant's wallet. Otherwise it stays pending until the provider reports it " +
    "(`webhook-payments`, or the job's reconciliation), a failure or reversal returning it to the merchant's wallet once.",
  refusals: [
    ACCOUNT_FROZEN,
    MERCHANT_NOT_FOUND,
    MERCHANT_FROZEN,
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
  body: merchantWithdrawBody,
  response: merchantWithdrawResponse,
  handler: ({ user, body }) => merchantWithdraw(user, body),
});
