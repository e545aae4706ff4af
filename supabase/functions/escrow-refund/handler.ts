import { endpoint } from '../../../shared/endpoint.ts';
import { refundEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-refund',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => refundEscrow(user, body.escrow_id),
});
