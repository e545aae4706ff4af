import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneList } from '../../../shared/escrow/milestones.ts';
import { escrowIdQuery, milestoneListResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'milestone-list',
  summary: "Lists an escrow's milestones",
  description: 'Either party, in any state of the escrow; to anyone else the escrow does not exist. Every milestone, ' +
    'cancelled and released ones included, in the order they were proposed. Changes nothing.',
  refusals: [ESCROW_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: escrowIdQuery,
  response: milestoneListResponse,
  handler: ({ user, query }) => milestoneList(user, query.escrow_id),
});
