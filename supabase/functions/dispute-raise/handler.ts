import { endpoint } from '../../../shared/endpoint.ts';
import { raiseDispute } from '../../../shared/disputes.ts';
import { disputeRaiseBody, disputeResponse } from '../../../shared/schemas/disputes.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/refusals.ts';

export default endpoint({
  name: 'dispute-raise',
  summary: 'Raises a dispute on a funded escrow, which holds its money until it is settled',
  refusals: {
    404: ESCROW_NOT_FOUND,
    409: 'The escrow cannot be disputed in its state, or is disputed already',
  },
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: disputeRaiseBody,
  response: disputeResponse,
  handler: ({ user, body }) => raiseDispute(user, body),
});
