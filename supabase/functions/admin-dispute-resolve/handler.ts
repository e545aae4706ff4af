import { endpoint } from '../../../shared/endpoint.ts';
import { resolveDisputeAsAdmin } from '../../../shared/disputes.ts';
import { adminDisputeResolveBody, adminDisputeResponse } from '../../../shared/schemas/disputes.ts';

export default endpoint({
  name: 'admin-dispute-resolve',
  method: 'POST',
  auth: 'admin',
  idempotent: true,
  body: adminDisputeResolveBody,
  response: adminDisputeResponse,
  handler: ({ user, body }) => resolveDisputeAsAdmin(user, body),
});
