import { endpoint } from '../../../shared/core/endpoint.ts';
import { adminSession } from '../../../shared/auth/session.ts';
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
  summary: 'Resolves an escalated dispute by release, refund or split',
  refusals: [ADMIN_IS_PARTY, DISPUTE_NOT_FOUND, DISPUTE_WRONG_STATE, SPLIT_EXCEEDS_HELD],
  method: 'POST',
  auth: adminSession,
  idempotent: true,
  repeat: 'settles a dispute and moves the money',
  body: adminDisputeResolveBody,
  response: adminDisputeResponse,
  handler: ({ user, body }) => adminDisputeResolve(user, body),
});
