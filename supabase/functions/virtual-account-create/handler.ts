import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { VIRTUAL_ACCOUNT_REFUSED } from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { virtualAccountResponse } from '../../../shared/money/schema.ts';
import { virtualAccountCreate } from '../../../shared/money/wallet.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'virtual-account-create',
  summary: 'Requests a dedicated bank account number for top-ups by transfer',
  description: 'A signed-in user at KYC tier 1 or above. Asks the provider for a dedicated account, `pending` until ' +
    '`webhook-payments` makes it `active` (number, name and bank) or `inactive`; one already pending or active is ' +
    'answered as it is, without asking again, and an inactive one may be asked for again. If the provider refuses ' +
    'or cannot be reached, it is marked `inactive` with the reason.',
  refusals: [ACCOUNT_FROZEN, KYC_TIER_REQUIRED, VIRTUAL_ACCOUNT_REFUSED, PROVIDER_UNAVAILABLE],
  method: 'POST',
  auth: userSession,
  idempotent: 'provider',
  repeat: 'asks the provider for a dedicated account',
  response: virtualAccountResponse,
  handler: ({ user }) => virtualAccountCreate(user),
});
