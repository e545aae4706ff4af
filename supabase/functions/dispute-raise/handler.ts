import { endpoint } from '../../../shared/endpoint.ts';
import { raiseDispute } from '../../../shared/disputes.ts';
import { disputeRaiseBody, disputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'dispute-raise',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: disputeRaiseBody,
  response: disputeResponse,
  handler: ({ user, body }) => raiseDispute(user, body),
});
