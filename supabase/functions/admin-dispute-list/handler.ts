import { endpoint } from '../../../shared/core/endpoint.ts';
import { adminSession } from '../../../shared/auth/session.ts';
import { adminDisputeList } from '../../../shared/disputes/disputes.ts';
import { adminDisputeListQuery, adminDisputeListResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'admin-dispute-list',
  summary: 'Lists disputes for the admin queue (open ones by default)',
  method: 'GET',
  auth: adminSession,
  query: adminDisputeListQuery,
  response: adminDisputeListResponse,
  handler: ({ user, query }) => adminDisputeList(user, query),
});
