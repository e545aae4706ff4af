import { endpoint } from '../../../shared/core/endpoint.ts';
import { listEscrows } from '../../../shared/escrow/escrow.ts';
import { escrowListQuery, escrowListResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'escrow-list',
  summary: "Lists the caller's escrows, newest first",
  method: 'GET',
  auth: 'user',
  query: escrowListQuery,
  response: escrowListResponse,
  handler: ({ user, query }) => listEscrows(user.claims, query),
});
