import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminAuditList } from '../../../shared/operators/lists.ts';
import { adminAuditListQuery, adminAuditListResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-audit-list',
  summary: 'Reads the operator audit, newest first',
  description:
    'Admins with a second-factor pass only (to anyone who is not an operator the function does not exist; other ' +
    'operators get 403). Every operator action and read, newest first, filtered by `operator_id`, `target_id` and ' +
    '`action`; page with `after`, the id of the last row of the previous page. Facts are ids and statuses, never an ' +
    'identity number whole. Each read is itself written to the audit (audit.read).',
  method: 'GET',
  auth: operatorMode(['admin']),
  query: adminAuditListQuery,
  response: adminAuditListResponse,
  handler: ({ user, query }) => adminAuditList(user, query),
});
