import { endpoint } from '../../../shared/endpoint.ts';
import { cancelEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-cancel',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowIdBody,
  handler: ({ user, body }) => cancelEscrow(user, body.escrow_id),
});
