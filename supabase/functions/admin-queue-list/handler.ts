import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminQueueList } from '../../../shared/operators/reads.ts';
import { adminQueueListResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-queue-list',
  summary: 'What waits for an operator: each queue with its count and oldest age',
  description:
    'Operators of any role with a second-factor pass (to anyone who is not an operator the function does not ' +
    'exist). For each queue (disputes in negotiation, escalated disputes, charges held for review, failed ' +
    'payouts not retried, failed webhook effects, identity flags): how many wait, since when the oldest waits and ' +
    'for how many seconds. Counts name no one, so no audit row is written.',
  method: 'GET',
  auth: operatorMode(),
  response: adminQueueListResponse,
  handler: ({ user }) => adminQueueList(user),
});
