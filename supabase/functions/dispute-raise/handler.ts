import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeRaise } from '../../../shared/disputes/disputes.ts';
import { disputeRaiseBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';
import { DISPUTE_WITHDRAWN_BEFORE, INSPECTION_ENDED } from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-raise',
  summary: 'Raises a dispute on a funded escrow, which holds its money until it is settled',
  refusals: [ESCROW_NOT_FOUND, ESCROW_WRONG_STATE, INSPECTION_ENDED, DISPUTE_WITHDRAWN_BEFORE],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'opens a dispute and stops the escrow; a repeat is 409 (one open dispute per escrow)',
  body: disputeRaiseBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeRaise(user, body),
});
