import { endpoint } from '../../../shared/endpoint.ts';
import { updateMilestone } from '../../../shared/milestones.ts';
import { milestoneResponse, milestoneUpdateBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-update',
  method: 'PATCH',
  auth: 'user',
  idempotent: false,
  body: milestoneUpdateBody,
  response: milestoneResponse,
  handler: ({ user, body }) => updateMilestone(user, body),
});
