import { endpoint } from '../../../shared/endpoint.ts';
import { releaseMilestone } from '../../../shared/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-release',
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => releaseMilestone(user, body.milestone_id),
});
