import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneUpdate } from '../../../shared/escrow/milestones.ts';
import { milestoneResponse, milestoneUpdateBody } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_STATE,
  MILESTONE_NOT_FOUND,
  MILESTONE_WRONG_STATE,
  MILESTONES_EXCEED_AMOUNT,
} from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'milestone-update',
  summary: 'Either party edits a milestone while it is proposed; the other party must approve it again',
  description: 'Either party, while the milestone is `proposed` and the escrow `draft`, `invite_pending`, `active` ' +
    'or `funded`; only the fields sent change, and the milestones still may not add up to more than the escrow ' +
    "amount. The editor's approval stands, the other party's is withdrawn and they are notified " +
    '(`milestone_updated`); no money moves.',
  refusals: [
    ESCROW_NOT_FOUND,
    MILESTONE_NOT_FOUND,
    ESCROW_WRONG_STATE,
    MILESTONE_WRONG_STATE,
    MILESTONES_EXCEED_AMOUNT,
  ],
  method: 'PATCH',
  auth: userSession,
  idempotent: false,
  repeat: 'the same changes again leave it as it was (the other party is told again)',
  body: milestoneUpdateBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneUpdate(user, body),
});
