import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeRaise } from '../../../shared/disputes/disputes.ts';
import { disputeRaiseBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'dispute-raise',
  summary: 'Raises a dispute on a funded escrow, which holds its money until it is settled',
  refusals: {
    404: ESCROW_NOT_FOUND,
    409: 'The escrow cannot be disputed in its state, or is disputed already',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'opens a dispute and stops the escrow; a repeat is 409 (one open dispute per escrow)',
  body: disputeRaiseBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeRaise(user, body),
});
