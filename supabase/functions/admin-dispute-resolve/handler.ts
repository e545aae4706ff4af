import { endpoint } from '../../../shared/core/endpoint.ts';
import { adminSession } from '../../../shared/auth/session.ts';
import { adminDisputeResolve } from '../../../shared/disputes/disputes.ts';
import { adminDisputeResolveBody, adminDisputeResponse } from '../../../shared/disputes/schema.ts';

export default endpoint({
  name: 'admin-dispute-resolve',
  summary: 'Resolves an escalated dispute by release, refund or split',
  refusals: {
    403: 'The admin is a party to this escrow',
    404: 'No dispute with this id',
    409: 'The dispute is not escalated (already resolved or withdrawn)',
  },
  method: 'POST',
  auth: adminSession,
  idempotent: true,
  repeat: 'settles a dispute and moves the money',
  body: adminDisputeResolveBody,
  response: adminDisputeResponse,
  handler: ({ user, body }) => adminDisputeResolve(user, body),
});
