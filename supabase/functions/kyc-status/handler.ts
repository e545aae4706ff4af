import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { kycStatus } from '../../../shared/kyc/flows.ts';
import { kycStatusResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'kyc-status',
  summary: "The caller's KYC tier, its limits, what was used today and what the next tier needs",
  method: 'GET',
  auth: userSession,
  response: kycStatusResponse,
  handler: ({ user }) => kycStatus(user),
});
