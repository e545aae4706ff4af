import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeGet } from '../../../shared/disputes/disputes.ts';
import { disputeEscrowQuery, disputeResponse } from '../../../shared/disputes/schema.ts';
import { DISPUTE_NOT_FOUND } from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-get',
  summary: 'Reads the dispute of an escrow: its status, proposals and deadlines',
  description: 'Either party of the escrow, or an admin; to anyone else there is no dispute. The open dispute (in ' +
    '`negotiation` or `escalated`), else the most recent one, with its open proposals. Changes nothing.',
  refusals: [DISPUTE_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: disputeEscrowQuery,
  response: disputeResponse,
  handler: ({ user, query }) => disputeGet(user, query.escrow_id),
});
