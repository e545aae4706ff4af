import { endpoint } from '../../../shared/endpoint.ts';
import { completeMilestone } from '../../../shared/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-complete',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => completeMilestone(user, body.milestone_id),
});
