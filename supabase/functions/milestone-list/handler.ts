import { endpoint } from '../../../shared/endpoint.ts';
import { listMilestones } from '../../../shared/milestones.ts';
import { escrowIdQuery, milestoneListResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-list',
  method: 'GET',
  auth: 'user',
  query: escrowIdQuery,
  response: milestoneListResponse,
  handler: ({ user, query }) => listMilestones(user.claims, query.escrow_id),
});
