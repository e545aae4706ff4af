import { endpoint } from '../../../shared/endpoint.ts';
import { updateMilestone } from '../../../shared/milestones.ts';
import { milestoneResponse, milestoneUpdateBody } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-update',
  summary: 'Edits a milestone while it is proposed',
  refusals: {
    403: "Only the milestone's proposer can edit it",
    404: 'No milestone on an escrow the caller is a party to',
    409: "The milestone is no longer proposed, or the change would exceed the escrow's amount",
  },
  method: 'PATCH',
  auth: 'user',
  idempotent: false,
  body: milestoneUpdateBody,
  response: milestoneResponse,
  handler: ({ user, body }) => updateMilestone(user, body),
});
