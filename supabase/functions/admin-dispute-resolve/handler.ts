import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminDisputeResolve } from '../../../shared/disputes/disputes.ts';
import { adminDisputeResolveBody, adminDisputeResolveResponse } from '../../../shared/disputes/schema.ts';
import {
  ADMIN_IS_PARTY,
  DISPUTE_NOT_FOUND,
  DISPUTE_WRONG_STATE,
  SPLIT_EXCEEDS_HELD,
} from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'admin-dispute-resolve',
  summary: 'Resolves an open dispute, escalated or still negotiated, by release, refund or split',
  description:
    'Operators with the disputes role and a second-factor pass (to anyone who is not an operator the function ' +
    'does not exist), never on an escrow the operator is a party to. Settles a dispute in `negotiation` or `escalated` as an accepted proposal would: the money leaves ' +
    'the hold, the escrow is `released` or `refunded`, open proposals close, both parties are told ' +
    "and the payee's share goes on to their bank; the decision and its `resolution` are audited. When the escrow " +
    'still holds more than FOUR_EYES_MIN_AMOUNT (NGN 1,000,000 by default), the answer is 202 with an approval: a ' +
    'second disputes operator approves it (admin-approval-decide), which performs it unless the dispute was ' +
    'settled or withdrawn meanwhile.',
  refusals: [ADMIN_IS_PARTY, DISPUTE_NOT_FOUND, DISPUTE_WRONG_STATE, SPLIT_EXCEEDS_HELD],
  method: 'POST',
  auth: operatorMode(['disputes']),
  idempotent: true,
  repeat: 'settles a dispute and moves the money',
  body: adminDisputeResolveBody,
  response: adminDisputeResolveResponse,
  alsoSucceedsWith: [{
    status: 202,
    description: 'The escrow still holds more than FOUR_EYES_MIN_AMOUNT: the resolution waits for a second operator',
  }],
  handler: ({ user, body }) => adminDisputeResolve(user, body),
});
