import { endpoint } from '../../../shared/endpoint.ts';
import { getDispute } from '../../../shared/disputes.ts';
import { disputeEscrowQuery, disputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'dispute-get',
  summary: 'Reads the dispute of an escrow: its status, proposals and deadlines',
  refusals: {
    404: 'No dispute on an escrow the caller is a party to',
  },
  method: 'GET',
  auth: 'user',
  query: disputeEscrowQuery,
  response: disputeResponse,
  handler: ({ user, query }) => getDispute(user.claims, query.escrow_id),
});
