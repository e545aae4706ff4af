import { endpoint } from '../../../shared/endpoint.ts';
import { cancelEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-cancel',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => cancelEscrow(user, body.escrow_id),
});
