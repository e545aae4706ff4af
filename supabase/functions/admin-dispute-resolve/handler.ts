import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminDisputeResolve } from '../../../shared/disputes/disputes.ts';
import { adminDisputeResolveBody, adminDisputeResponse } from '../../../shared/disputes/schema.ts';
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
    'does not exist), and never on an escrow the operator is a ' +
    'party to. Settles a dispute in `negotiation` or `escalated` as an accepted proposal would: the money leaves ' +
    'the hold, the escrow is `released` or `refunded`, open proposals close, both parties are told what they ' +
    "received (`dispute_resolved` and an SMS) and the payee's share goes on to their bank as after a release. The " +
    'decision and its `resolution` are written to the admin audit log in the same transaction.',
  refusals: [ADMIN_IS_PARTY, DISPUTE_NOT_FOUND, DISPUTE_WRONG_STATE, SPLIT_EXCEEDS_HELD],
  method: 'POST',
  auth: operatorMode(['disputes']),
  idempotent: true,
  repeat: 'settles a dispute and moves the money',
  body: adminDisputeResolveBody,
  response: adminDisputeResponse,
  handler: ({ user, body }) => adminDisputeResolve(user, body),
});
