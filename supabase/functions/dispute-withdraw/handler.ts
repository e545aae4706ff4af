import { endpoint } from '../../../shared/endpoint.ts';
import { withdrawDispute } from '../../../shared/disputes.ts';
import { disputeEscrowBody, disputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'dispute-withdraw',
  summary: "Withdraws the caller's dispute; the escrow goes back to where it was",
  refusals: {
    403: 'Only the party who raised the dispute can withdraw it',
    404: 'No dispute on an escrow the caller is a party to',
    409: 'The dispute is no longer open',
  },
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: disputeEscrowBody,
  response: disputeResponse,
  handler: ({ user, body }) => withdrawDispute(user, body.escrow_id),
});
