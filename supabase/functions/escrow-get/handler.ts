import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowGet } from '../../../shared/escrow/escrow.ts';
import { escrowIdQuery, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-get',
  summary: 'Reads one escrow the caller is a party to',
  refusals: [ESCROW_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: escrowIdQuery,
  response: escrowResponse,
  handler: ({ user, query }) => escrowGet(user, query.escrow_id),
});
