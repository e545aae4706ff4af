import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeGet } from '../../../shared/disputes/disputes.ts';
import { disputeEscrowQuery, disputeResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'dispute-get',
  summary: 'Reads the dispute of an escrow: its status, proposals and deadlines',
  refusals: {
    404: 'No dispute on an escrow the caller is a party to',
  },
  method: 'GET',
  auth: userSession,
  query: disputeEscrowQuery,
  response: disputeResponse,
  handler: ({ user, query }) => disputeGet(user, query.escrow_id),
});
