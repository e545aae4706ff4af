import { endpoint } from '../../../shared/endpoint.ts';
import { approveMilestone } from '../../../shared/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'milestone-approve',
  summary: 'A party approves a proposed milestone; it is accepted once both parties have',
  refusals: {
    404: 'No milestone on an escrow the caller is a party to',
    409: 'The milestone or its escrow is not in a state that allows this',
  },
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => approveMilestone(user, body.milestone_id),
});
