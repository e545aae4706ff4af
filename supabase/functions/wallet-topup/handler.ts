import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { walletTopupBody, walletTopupResponse } from '../../../shared/money/schema.ts';
import { walletTopup } from '../../../shared/money/wallet.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { unclassifiedRefusals } from '../../../shared/core/endpoint.ts';

export default endpoint({
  name: 'wallet-topup',
  summary: 'Tops up the wallet by card; the money is credited when the provider confirms the charge',
  refusals: [
    ...unclassifiedRefusals({
      402: 'The card was declined, or the payment provider refused the charge',
      404: "The saved card is not one of the caller's",
      503: 'The payment provider is unavailable; nothing was charged',
    }),
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'starts a card charge',
  body: walletTopupBody,
  response: walletTopupResponse,
  handler: ({ user, body }) => walletTopup(user, body),
});
