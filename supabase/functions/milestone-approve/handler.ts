import { endpoint } from '../../../shared/endpoint.ts';
import { approveMilestone } from '../../../shared/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-approve',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => approveMilestone(user, body.milestone_id),
});
