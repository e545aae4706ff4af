import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { kycStatus } from '../../../shared/kyc/flows.ts';
import { kycStatusResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'kyc-status',
  summary: "The caller's KYC tier, its limits, what was used today and what the next tier needs",
  description: 'A signed-in user, about themselves: the tier with its single, daily and balance limits, what counts ' +
    "toward today's limit since 00:00 Lagos time, each check with its status (and, when failed, whether it may be " +
    'tried again), and the checks the next tier needs. Changes nothing.',
  method: 'GET',
  auth: userSession,
  response: kycStatusResponse,
  handler: ({ user }) => kycStatus(user),
});
