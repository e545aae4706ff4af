import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminApprovalList } from '../../../shared/operators/lists.ts';
import { adminApprovalListQuery, adminApprovalListResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-approval-list',
  summary: 'Lists the four-eyes approvals: those still pending first, oldest first',
  description:
    'Any operator with a second-factor pass (to anyone who is not an operator the function does not exist). The ' +
    'approvals still pending come first, then the decided and expired ones, each group oldest first; `status` ' +
    'keeps one status (a pending approval past its 24 hours is shown as `expired`). Page with `after`, the id of ' +
    "the last approval of the previous page. Who may decide one: admin-approval-decide's rules.",
  method: 'GET',
  auth: operatorMode(),
  query: adminApprovalListQuery,
  response: adminApprovalListResponse,
  handler: ({ user, query }) => adminApprovalList(user, query),
});
