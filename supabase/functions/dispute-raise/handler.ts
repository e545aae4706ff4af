import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeRaise } from '../../../shared/disputes/disputes.ts';
import { disputeRaiseBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';
import { DISPUTE_WITHDRAWN_BEFORE, INSPECTION_ENDED } from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-raise',
  summary: 'Raises a dispute on a funded escrow, which holds its money until it is settled',
  description: 'Either party, while the escrow is `funded` or in `inspection`, but not once its inspection period ' +
    'has ended, nor by a party who withdrew a dispute on this escrow before. The escrow becomes `disputed` ' +
    '(nothing is released or refunded, the inspection clock stops) and the dispute is in `negotiation` until ' +
    '`negotiation_deadline`, 72 hours later; when the payer raised it, `auto_release_at` says the job releases to ' +
    'the payee at the deadline if the payer took no part. Both parties are notified (`dispute_raised`); no money ' +
    'moves.',
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
