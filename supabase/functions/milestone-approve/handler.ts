import { endpoint } from '../../../shared/endpoint.ts';
import { approveMilestone } from '../../../shared/milestones.ts';
import { milestoneIdBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-approve',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: milestoneIdBody,
  handler: ({ user, body }) => approveMilestone(user, body.milestone_id),
});
