import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminDisputeList } from '../../../shared/disputes/disputes.ts';
import { adminDisputeListQuery, adminDisputeListResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'admin-dispute-list',
  summary: 'Lists disputes for the admin queue (open ones by default)',
  description:
    'Operators with the disputes role and a second-factor pass (to anyone who is not an operator the function does not exist). The open disputes (`negotiation` and ' +
    "`escalated`) or those of `status`, oldest first, each with its escrow, both parties' names, what is not yet " +
    'released and every proposal made; page with `after`. Each call is written to the admin audit log.',
  method: 'GET',
  auth: operatorMode(['disputes']),
  query: adminDisputeListQuery,
  response: adminDisputeListResponse,
  handler: ({ user, query }) => adminDisputeList(user, query),
});
