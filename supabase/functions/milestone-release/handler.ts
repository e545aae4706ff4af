import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneRelease } from '../../../shared/escrow/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'milestone-release',
  summary: "The payer releases a completed milestone's amount to the payee",
  refusals: {
    403: "The caller's role cannot release this milestone",
    404: 'No milestone on an escrow the caller is a party to',
    409: 'The milestone or its escrow is not in a state that allows this',
  },
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "pays the payee the milestone's share and may start a payout to their bank",
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneRelease(user, body.milestone_id),
});
