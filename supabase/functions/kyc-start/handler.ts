import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_CHECK_PASSED, KYC_CHECK_REJECTED, KYC_PROVIDER_REFUSED } from '../../../shared/kyc/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { kycStart } from '../../../shared/kyc/flows.ts';
import { kycStartBody, kycStartResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'kyc-start',
  summary: "Starts a KYC verification (level 1 or 2) and answers the provider's access token for the app's SDK",
  description: 'A signed-in user; level 1 is the `kyc_basic` check, level 2 `kyc_address`. Marks the check pending ' +
    'and answers a token for the Sumsub SDK, valid `expires_in` seconds; a check that passed, or was rejected for ' +
    'good, cannot be started again. The result arrives only through `webhook-kyc`: nothing here changes the tier.',
  refusals: [KYC_CHECK_PASSED, KYC_CHECK_REJECTED, KYC_PROVIDER_REFUSED, PROVIDER_UNAVAILABLE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'answers a fresh SDK token for the same applicant; the check stays pending',
  body: kycStartBody,
  response: kycStartResponse,
  handler: ({ user, body }) => kycStart(user, body.level),
});
