import { endpoint } from '../../../shared/endpoint.ts';
import { declineEscrow } from '../../../shared/escrow.ts';
import { escrowInviteBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-decline',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowInviteBody,
  response: escrowResponse,
  handler: ({ user, body }) => declineEscrow(user, body),
});
