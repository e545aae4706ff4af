import { endpoint } from '../../../shared/endpoint.ts';
import { proposeSettlement } from '../../../shared/disputes.ts';
import { disputeProposeBody, disputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'dispute-propose',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: disputeProposeBody,
  response: disputeResponse,
  handler: ({ user, body }) => proposeSettlement(user, body),
});
