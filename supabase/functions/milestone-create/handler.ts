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
