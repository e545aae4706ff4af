import { endpoint } from '../../../shared/endpoint.ts';
import { fundEscrow } from '../../../shared/escrow.ts';
import { escrowFundBody, escrowFundResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-fund',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowFundBody,
  response: escrowFundResponse,
  handler: ({ user, body }) => fundEscrow(user, body),
});
