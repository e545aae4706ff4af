import { endpoint } from '../../../shared/endpoint.ts';
import { acceptEscrow } from '../../../shared/escrow.ts';
import { escrowInviteBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-accept',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: escrowInviteBody,
  handler: ({ user, body }) => acceptEscrow(user, body),
});
