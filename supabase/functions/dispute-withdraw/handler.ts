import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeWithdraw } from '../../../shared/disputes/disputes.ts';
import { disputeEscrowBody, disputeResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'dispute-withdraw',
  summary: "Withdraws the caller's dispute; the escrow goes back to where it was",
  refusals: {
    403: 'Only the party who raised the dispute can withdraw it',
    404: 'No dispute on an escrow the caller is a party to',
    409: 'The dispute is no longer open',
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds no open dispute (409)',
  body: disputeEscrowBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeWithdraw(user, body.escrow_id),
});
