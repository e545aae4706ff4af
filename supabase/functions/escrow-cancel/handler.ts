import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCancel } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_TRANSITION_REFUSALS } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-cancel',
  summary: "Cancels an escrow before it is delivered; money held goes back to the payer's wallet",
  refusals: ESCROW_TRANSITION_REFUSALS,
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "a funded escrow's money goes back to the payer's wallet",
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowCancel(user, body.escrow_id),
});
