import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneApprove } from '../../../shared/escrow/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_STATE,
  MILESTONE_NOT_FOUND,
  MILESTONE_WRONG_STATE,
} from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'milestone-approve',
  summary: 'A party approves a proposed milestone; it is accepted once both parties have',
  description: 'Either party, while the milestone is `proposed` and the escrow `draft`, `invite_pending`, `active` ' +
    'or `funded`. The second approval makes it `accepted` and both parties are notified (`milestone_accepted`); ' +
    'approving again changes nothing, and no money moves.',
  refusals: [ESCROW_NOT_FOUND, MILESTONE_NOT_FOUND, ESCROW_WRONG_STATE, MILESTONE_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: "records one party's approval; a repeat changes nothing",
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneApprove(user, body.milestone_id),
});
