import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputePropose } from '../../../shared/disputes/disputes.ts';
import { disputeProposeBody, disputeResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'dispute-propose',
  summary: 'Proposes an outcome to the other party: release, refund or a split',
  refusals: {
    404: 'No dispute on an escrow the caller is a party to',
    409: 'The dispute is not in negotiation, or the proposal does not fit the escrow',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'records a proposal (a repeat without a key replaces it with an identical one)',
  body: disputeProposeBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputePropose(user, body),
});
