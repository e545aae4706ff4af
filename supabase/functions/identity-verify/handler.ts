import { endpoint } from '../../../shared/core/endpoint.ts';
import { IDENTITY_IN_USE, KYC_CHECK_PASSED, KYC_PROVIDER_REFUSED } from '../../../shared/kyc/refusals.ts';
import { PROVIDER_UNAVAILABLE, RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { identityVerify } from '../../../shared/kyc/flows.ts';
import { identityVerifyBody, identityVerifyResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'identity-verify',
  summary: 'Starts an identity check (NIN, BVN, CAC, TIN, bank account, director) for tier 3 and above',
  description: 'A signed-in user, at most 3 checks of each type a day by default. Records a pending check (`nin` and ' +
    '`bvn` count toward tier 3; `cac`, `tin`, `bank_account` and `director` toward tier 4) and asks the ' +
    "identity-check provider for it, a NIN or BVN with the profile's names and phone; the number is kept only as a " +
    'keyed hash and its last 4 characters. A check that passed or was rejected for good cannot be asked for again, ' +
    'nor a NIN or BVN that verifies another account, and one the provider could not take is not left pending. The ' +
    'result arrives only through `webhook-identity`, and a NIN or BVN passes only with the names of the profile.',
  refusals: [KYC_CHECK_PASSED, IDENTITY_IN_USE, RATE_LIMITED, KYC_PROVIDER_REFUSED, PROVIDER_UNAVAILABLE],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: 'provider',
  repeat: 'asks the identity provider for a paid lookup; a repeat without a key asks again',
  body: identityVerifyBody,
  response: identityVerifyResponse,
  handler: ({ user, body }) => identityVerify(user, body),
});
