import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminUserGet } from '../../../shared/operators/reads.ts';
import { OPERATOR_NOT_FOUND } from '../../../shared/operators/refusals.ts';
import { adminUserGetQuery, adminUserGetResponse } from '../../../shared/operators/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'admin-user-get',
  summary: "A user's whole picture for support",
  description:
    'Operators of any role with a second-factor pass (to anyone who is not an operator the function does not ' +
    'exist). The profile, KYC checks (identity numbers masked to their last 3 digits), the wallet, a freeze in ' +
    'force with its reason, live sessions, operator roles, merchants owned, payout accounts (account numbers ' +
    'masked) and cards (last 4), the 20 latest escrows and transactions (held charges flagged, with the expected and reported amounts), open ' +
    "disputes and the 20 latest SMS to the user's phone (their status and resends, never their text: what " +
    'admin-sms-resend takes). Each read is written to the admin audit log (`user.read`) with `reason` when given.',
  refusals: [USER_NOT_FOUND, OPERATOR_NOT_FOUND],
  method: 'GET',
  auth: operatorMode(),
  query: adminUserGetQuery,
  response: adminUserGetResponse,
  handler: ({ user, query }) => adminUserGet(user, query),
});
