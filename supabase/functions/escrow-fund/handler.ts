import { endpoint } from '../../../shared/endpoint.ts';
import { fundEscrow } from '../../../shared/escrow.ts';
import { escrowFundBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-fund',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowFundBody,
  handler: ({ user, body }) => fundEscrow(user, body),
});
