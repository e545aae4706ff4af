import { endpoint } from '../../../shared/core/endpoint.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminEscrowGet } from '../../../shared/operators/reads.ts';
import { OPERATOR_NOT_FOUND } from '../../../shared/operators/refusals.ts';
import { adminEscrowGetQuery, adminEscrowGetResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-escrow-get',
  summary: 'An escrow and its timeline from the event log and the ledger',
  description:
    'Operators of any role with a second-factor pass (to anyone who is not an operator the function does not ' +
    'exist). The escrow with its money, parties and milestones; its events from the event log; the ledger ' +
    'transfers that touched its hold, each with its entries; the payouts started for it; its latest dispute with ' +
    "every proposal. The conversation's messages are shown only while a dispute is open or with a `reason`; " +
    'otherwise only their count. Each read is written to the admin audit log (`escrow.read`, saying whether ' +
    'content was shown).',
  refusals: [ESCROW_NOT_FOUND, OPERATOR_NOT_FOUND],
  method: 'GET',
  auth: operatorMode(),
  query: adminEscrowGetQuery,
  response: adminEscrowGetResponse,
  handler: ({ user, query }) => adminEscrowGet(user, query),
});
