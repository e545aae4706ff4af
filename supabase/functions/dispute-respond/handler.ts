import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeRespond } from '../../../shared/disputes/disputes.ts';
import { disputeRespondBody, disputeResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'dispute-respond',
  summary: "Accepts or rejects the other party's open proposal",
  refusals: {
    403: "The proposal is the caller's own",
    404: 'No such dispute or proposal for the caller',
    409: 'The proposal is no longer open, or the dispute not in negotiation',
  },
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'accepting settles the dispute and moves the money',
  body: disputeRespondBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeRespond(user, body),
});
