import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneComplete } from '../../../shared/escrow/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'milestone-complete',
  summary: 'The payee marks a milestone completed',
  refusals: {
    403: "The caller's role cannot complete this milestone",
    404: 'No milestone on an escrow the caller is a party to',
    409: 'The milestone or its escrow is not in a state that allows this',
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'moves no money; a repeat is 409',
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneComplete(user, body.milestone_id),
});
