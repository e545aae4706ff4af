import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneApprove } from '../../../shared/escrow/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'milestone-approve',
  summary: 'A party approves a proposed milestone; it is accepted once both parties have',
  refusals: {
    404: 'No milestone on an escrow the caller is a party to',
    409: 'The milestone or its escrow is not in a state that allows this',
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: "records one party's approval; a repeat changes nothing",
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneApprove(user, body.milestone_id),
});
