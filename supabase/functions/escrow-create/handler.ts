import { endpoint } from '../../../shared/endpoint.ts';
import { createEscrow } from '../../../shared/escrow.ts';
import { escrowCreateBody, escrowCreateResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-create',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: escrowCreateBody,
  response: escrowCreateResponse,
  handler: ({ user, body }) => createEscrow(user, body),
});
