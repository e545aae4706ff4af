import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowList } from '../../../shared/escrow/escrow.ts';
import { escrowListQuery, escrowListResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'escrow-list',
  summary: "Lists the caller's escrows, newest first",
  method: 'GET',
  auth: userSession,
  query: escrowListQuery,
  response: escrowListResponse,
  handler: ({ user, query }) => escrowList(user, query),
});
