import { endpoint } from '../../../shared/endpoint.ts';
import { withdrawDispute } from '../../../shared/disputes.ts';
import { disputeEscrowBody, disputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'dispute-withdraw',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: disputeEscrowBody,
  response: disputeResponse,
  handler: ({ user, body }) => withdrawDispute(user, body.escrow_id),
});
