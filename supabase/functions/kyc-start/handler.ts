import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { kycStart } from '../../../shared/kyc/flows.ts';
import { kycStartBody, kycStartResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'kyc-start',
  summary: "Starts a KYC verification (level 1 or 2) and answers the provider's access token for the app's SDK",
  refusals: {
    409: 'The level is already passed, or a lower level is needed first',
    502: 'The KYC provider refused the request',
    503: 'The KYC provider is unavailable; try again shortly',
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'answers a fresh SDK token for the same applicant; the check stays pending',
  body: kycStartBody,
  response: kycStartResponse,
  handler: ({ user, body }) => kycStart(user, body.level),
});
