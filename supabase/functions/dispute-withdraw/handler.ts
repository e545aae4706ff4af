import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeWithdraw } from '../../../shared/disputes/disputes.ts';
import { disputeEscrowBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';
import { DISPUTE_NOT_OPEN, DISPUTE_WRONG_PARTY, DISPUTE_WRONG_STATE } from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-withdraw',
  summary: "Withdraws the caller's dispute; the escrow goes back to where it was",
  refusals: [ESCROW_NOT_FOUND, DISPUTE_WRONG_PARTY, DISPUTE_NOT_OPEN, DISPUTE_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds no open dispute (409)',
  body: disputeEscrowBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeWithdraw(user, body.escrow_id),
});
