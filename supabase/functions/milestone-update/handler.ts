import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneUpdate } from '../../../shared/escrow/milestones.ts';
import { milestoneResponse, milestoneUpdateBody } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'milestone-update',
  summary: "Either party edits a milestone while it is proposed; both parties' approvals start over",
  refusals: {
    404: 'No milestone on an escrow the caller is a party to',
    409: "The milestone is no longer proposed, or the change would exceed the escrow's amount",
  },
  method: 'PATCH',
  auth: userSession,
  idempotent: false,
  repeat: 'the same changes again leave it as it was (the other party is told again)',
  body: milestoneUpdateBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneUpdate(user, body),
});
