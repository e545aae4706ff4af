import { endpoint } from '../../../shared/endpoint.ts';
import { releaseEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-release',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => releaseEscrow(user, body.escrow_id),
});
