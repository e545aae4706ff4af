import { endpoint } from '../../../shared/endpoint.ts';
import { kycStart } from '../../../shared/kyc/flows.ts';
import { kycStartBody, kycStartResponse } from '../../../shared/schemas/kyc.ts';

export default endpoint({
  name: 'kyc-start',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: kycStartBody,
  response: kycStartResponse,
  handler: ({ user, body }) => kycStart(user, body.level),
});
