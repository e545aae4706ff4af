import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeWithdraw } from '../../../shared/disputes/disputes.ts';
import { disputeEscrowBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';
import { DISPUTE_NOT_OPEN, DISPUTE_WRONG_PARTY, DISPUTE_WRONG_STATE } from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-withdraw',
  summary: "Withdraws the caller's dispute; the escrow goes back to where it was",
  description: 'Only the party who raised the dispute, while it is in `negotiation`. It is `withdrawn`, its open ' +
    'proposals close, and the escrow returns to `funded`, or to `inspection` with the time its inspection period ' +
    'had left; both parties are notified (`dispute_withdrawn`). That party cannot raise another dispute on this ' +
    'escrow; no money moves.',
  refusals: [ESCROW_NOT_FOUND, DISPUTE_WRONG_PARTY, DISPUTE_NOT_OPEN, DISPUTE_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds no open dispute (409)',
  body: disputeEscrowBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeWithdraw(user, body.escrow_id),
});
