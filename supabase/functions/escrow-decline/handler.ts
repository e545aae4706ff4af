import { endpoint } from '../../../shared/endpoint.ts';
import { declineEscrow } from '../../../shared/escrow.ts';
import { escrowInviteBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-decline',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowInviteBody,
  handler: ({ user, body }) => declineEscrow(user, body),
});
