import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminTotpReset, FACTOR_RESET_REFUSALS } from '../../../shared/operators/roles.ts';
import { adminTotpResetBody, pendingApproval } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-totp-reset',
  summary: "Asks for an operator's second factor to be reset: always waits for a second admin",
  description:
    'Admins with a second-factor pass (to anyone who is not an operator the function does not exist). A reset is ' +
    'a four-eyes action: this answers 202 with a pending approval; when another admin who has held the admin role ' +
    'for 24 hours approves it (admin-approval-decide), the factor is forgotten, every pass of the operator ends, ' +
    'and the operator may enrol again (admin-totp-enrol) within 24 hours. Asking again while it is pending answers ' +
    'the same approval.',
  refusals: [...FACTOR_RESET_REFUSALS],
  method: 'POST',
  status: 202,
  auth: operatorMode(['admin']),
  idempotent: false,
  repeat: 'answers the same pending approval while it waits',
  body: adminTotpResetBody,
  response: pendingApproval,
  handler: ({ user, body }) => adminTotpReset(user, body),
});
