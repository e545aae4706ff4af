import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneComplete } from '../../../shared/escrow/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_PARTY,
  ESCROW_WRONG_STATE,
  MILESTONE_NOT_FOUND,
  MILESTONE_WRONG_STATE,
} from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'milestone-complete',
  summary: 'The payee marks a milestone completed',
  description: 'Only the payee (the freelancer), while the milestone is `accepted` and the escrow `draft`, ' +
    '`invite_pending`, `active` or `funded`. It becomes `completed` and the payer is asked to release it ' +
    '(`milestone_completed`); no money moves.',
  refusals: [ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, MILESTONE_NOT_FOUND, ESCROW_WRONG_STATE, MILESTONE_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'moves no money; a repeat is 409',
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneComplete(user, body.milestone_id),
});
