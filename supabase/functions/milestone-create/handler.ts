import { endpoint } from '../../../shared/endpoint.ts';
import { createMilestone } from '../../../shared/milestones.ts';
import { milestoneCreateBody, milestoneResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-create',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: milestoneCreateBody,
  response: milestoneResponse,
  handler: ({ user, body }) => createMilestone(user, body),
});
