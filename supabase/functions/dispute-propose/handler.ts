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
