import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorSignedIn } from '../../../shared/operators/auth.ts';
import { adminTotpVerify } from '../../../shared/operators/second-factor.ts';
import { adminTotpVerifyBody, adminTotpVerifyResponse } from '../../../shared/operators/schema.ts';
import { TOTP_INVALID, TOTP_LOCKED, TOTP_NOT_ENROLLED } from '../../../shared/operators/refusals.ts';

export default endpoint({
  name: 'admin-totp-verify',
  summary: "Passes the second factor for this session with the authenticator's code",
  description: 'A signed-in operator (to anyone else the function does not exist). A code of the current 30-second ' +
    'step, or of the step before or after it, that is later than the last code accepted passes: the factor is ' +
    'active (the first pass ends enrolment) and this session may call the operator endpoints for 12 hours. The ' +
    "pass is this session's alone: a sibling session born of a reused refresh token must pass again. Five wrong " +
    'or reused codes in a row lock the factor for 15 minutes.',
  refusals: [TOTP_NOT_ENROLLED, TOTP_INVALID, TOTP_LOCKED],
  method: 'POST',
  auth: operatorSignedIn,
  idempotent: false,
  repeat: 'a code passes once: the same code again is refused as reused',
  body: adminTotpVerifyBody,
  response: adminTotpVerifyResponse,
  handler: ({ user, body }) => adminTotpVerify(user, body.code),
});
