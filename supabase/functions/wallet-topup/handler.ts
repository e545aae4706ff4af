import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { CARD_DECLINED, CARD_NOT_FOUND, CHARGE_REFUSED } from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { walletTopupBody, walletTopupResponse } from '../../../shared/money/schema.ts';
import { walletTopup } from '../../../shared/money/wallet.ts';

export default endpoint({
  name: 'wallet-topup',
  summary: 'Tops up the wallet by card; the money is credited when the provider confirms the charge',
  refusals: [
    CARD_NOT_FOUND,
    CARD_DECLINED,
    CHARGE_REFUSED,
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
    PROVIDER_UNAVAILABLE,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'starts a card charge',
  body: walletTopupBody,
  response: walletTopupResponse,
  handler: ({ user, body }) => walletTopup(user, body),
});
