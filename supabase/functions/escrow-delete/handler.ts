import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowDelete } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-delete',
  summary: "Deletes a draft or cancelled escrow from the caller's list",
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a draft holds no money; a repeat is 409',
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowDelete(user, body.escrow_id),
});
