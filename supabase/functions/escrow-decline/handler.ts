import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowDecline } from '../../../shared/escrow/escrow.ts';
import { escrowInviteBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-decline',
  summary: 'The counterparty declines an escrow, by its id or its invite token',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "a funded escrow's money goes back to the payer's wallet",
  body: escrowInviteBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowDecline(user, body),
});
