import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { identityVerify } from '../../../shared/kyc/flows.ts';
import { identityVerifyBody, identityVerifyResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'identity-verify',
  summary: 'Starts an identity check (NIN, BVN, CAC, TIN, bank account, director) for tier 3 and above',
  refusals: {
    409: 'This check is already passed or pending, or the tier it belongs to is not reached yet',
    429: 'Too many checks requested; the message and Retry-After say how long to wait',
    502: 'The identity provider refused the request',
    503: 'The identity provider is unavailable; try again shortly',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'asks the identity provider for a paid lookup; a repeat without a key asks again',
  body: identityVerifyBody,
  response: identityVerifyResponse,
  handler: ({ user, body }) => identityVerify(user, body),
});
