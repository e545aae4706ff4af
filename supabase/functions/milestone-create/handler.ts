import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneCreate } from '../../../shared/escrow/milestones.ts';
import { milestoneCreateBody, milestoneResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_STATE,
  MILESTONES_EXCEED_AMOUNT,
  MILESTONES_HIRING_ONLY,
} from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'milestone-create',
  summary: 'Proposes a milestone on an escrow',
  description: 'Either party of a `hiring` escrow that is `draft`, `invite_pending`, `active` or `funded`; the ' +
    'milestones not cancelled may not add up to more than the escrow amount. The milestone is `proposed`, approved ' +
    'already by its proposer, and the other party is notified (`milestone_proposed`); no money moves, and a repeat ' +
    'without an Idempotency-Key proposes another.',
  refusals: [ESCROW_NOT_FOUND, MILESTONES_HIRING_ONLY, ESCROW_WRONG_STATE, MILESTONES_EXCEED_AMOUNT],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'creates a milestone; a repeat without a key creates another',
  body: milestoneCreateBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneCreate(user, body),
});
