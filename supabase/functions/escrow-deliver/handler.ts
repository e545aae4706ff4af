import { endpoint } from '../../../shared/endpoint.ts';
import { deliverEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-deliver',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => deliverEscrow(user, body.escrow_id),
});
