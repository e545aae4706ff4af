import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCancel } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-cancel',
  summary: "Cancels an escrow before it is delivered; money held goes back to the payer's wallet",
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "a funded escrow's money goes back to the payer's wallet",
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowCancel(user, body.escrow_id),
});
