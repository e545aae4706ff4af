import { endpoint } from '../../../shared/endpoint.ts';
import { identityVerify } from '../../../shared/kyc/flows.ts';
import { identityVerifyBody, identityVerifyResponse } from '../../../shared/schemas/kyc.ts';

export default endpoint({
  name: 'identity-verify',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: identityVerifyBody,
  response: identityVerifyResponse,
  handler: ({ user, body }) => identityVerify(user, body),
});
