import { endpoint } from '../../../shared/endpoint.ts';
import { getEscrow } from '../../../shared/escrow.ts';
import { escrowIdQuery, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-get',
  method: 'GET',
  auth: 'user',
  query: escrowIdQuery,
  response: escrowResponse,
  handler: ({ user, query }) => getEscrow(user.claims, query.escrow_id),
});
