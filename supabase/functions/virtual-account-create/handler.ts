import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { virtualAccountResponse } from '../../../shared/money/schema.ts';
import { virtualAccountCreate } from '../../../shared/money/wallet.ts';
import { KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { unclassifiedRefusals } from '../../../shared/core/endpoint.ts';

export default endpoint({
  name: 'virtual-account-create',
  summary: 'Requests a dedicated bank account number for top-ups by transfer',
  refusals: [
    ...unclassifiedRefusals({
      502: 'The payment provider refused the request',
      503: 'The payment provider is unavailable; try again',
    }),
    KYC_TIER_REQUIRED,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'asks the provider for a dedicated account',
  response: virtualAccountResponse,
  handler: ({ user }) => virtualAccountCreate(user),
});
