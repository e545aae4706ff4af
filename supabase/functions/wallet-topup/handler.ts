import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { CARD_DECLINED, CARD_NOT_FOUND, CHARGE_REFUSED } from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { walletTopupBody, walletTopupResponse } from '../../../shared/money/schema.ts';
import { walletTopup } from '../../../shared/money/wallet.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'wallet-topup',
  summary: 'Tops up the wallet by card; the money is credited when the provider confirms the charge',
  description: "A signed-in user at KYC tier 1 or above, within the tier's single, daily and balance limits (the " +
    'balance counting pending top-ups). Records a pending top-up whose id is the charge reference: a new card ' +
    "answers the provider's checkout page (`authorization_url`), a saved one (`card_id`) is charged with its " +
    'stored authorization. The wallet is credited only when `webhook-payments` confirms the charge of exactly that ' +
    'amount; a charge that is declined, refused or cannot be started marks the top-up failed.',
  refusals: [
    ACCOUNT_FROZEN,
    CARD_NOT_FOUND,
    CARD_DECLINED,
    CHARGE_REFUSED,
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
    PROVIDER_UNAVAILABLE,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: 'provider',
  repeat: 'starts a card charge',
  body: walletTopupBody,
  response: walletTopupResponse,
  handler: ({ user, body }) => walletTopup(user, body),
});
