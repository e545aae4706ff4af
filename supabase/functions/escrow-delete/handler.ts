import { endpoint } from '../../../shared/endpoint.ts';
import { deleteEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-delete',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => deleteEscrow(user, body.escrow_id),
});
