import { endpoint } from '../../../shared/endpoint.ts';
import { respondToProposal } from '../../../shared/disputes.ts';
import { disputeRespondBody, disputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'dispute-respond',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: disputeRespondBody,
  response: disputeResponse,
  handler: ({ user, body }) => respondToProposal(user, body),
});
