import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputePropose } from '../../../shared/disputes/disputes.ts';
import { disputeProposeBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';
import {
  DISPUTE_NOT_OPEN,
  DISPUTE_PROPOSAL_LIMIT,
  DISPUTE_WRONG_STATE,
  SPLIT_EXCEEDS_HELD,
} from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-propose',
  summary: 'Proposes an outcome to the other party: release, refund or a split',
  description: "Either party, while the escrow's dispute is in `negotiation` (not once escalated), at most 20 " +
    'proposals per party and dispute; a split leaves each side at least 0.01 of what is not yet released. The ' +
    "proposal replaces the proposer's open one and the other party is notified (`dispute_proposal`); no money " +
    'moves until it is accepted.',
  refusals: [ESCROW_NOT_FOUND, DISPUTE_NOT_OPEN, DISPUTE_WRONG_STATE, DISPUTE_PROPOSAL_LIMIT, SPLIT_EXCEEDS_HELD],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'records a proposal (a repeat without a key replaces it with an identical one)',
  body: disputeProposeBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputePropose(user, body),
});
