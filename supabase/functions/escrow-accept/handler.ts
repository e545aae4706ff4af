import { endpoint } from '../../../shared/endpoint.ts';
import { acceptEscrow } from '../../../shared/escrow.ts';
import { escrowInviteBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-accept',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: escrowInviteBody,
  response: escrowResponse,
  handler: ({ user, body }) => acceptEscrow(user, body),
});
