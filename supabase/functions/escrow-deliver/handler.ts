import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowDeliver } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-deliver',
  summary: 'The payee marks the escrow delivered; inspection or release follows by category',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'records the delivery, moves no money; a repeat is 409',
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowDeliver(user, body.escrow_id),
});
