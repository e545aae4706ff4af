import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorSignedIn } from '../../../shared/operators/auth.ts';
import { adminTotpEnrol } from '../../../shared/operators/second-factor.ts';
import { adminTotpEnrolResponse } from '../../../shared/operators/schema.ts';
import { TOTP_ALREADY_ACTIVE, TOTP_ENROLMENT_CLOSED } from '../../../shared/operators/refusals.ts';

export default endpoint({
  name: 'admin-totp-enrol',
  summary: "Enrols the operator's second factor (TOTP), answering its secret this once",
  description: 'A signed-in operator (to anyone else the function does not exist) with no active factor, within 24 ' +
    'hours of their latest grant or of a factor reset. Answers a new secret as an otpauth URI (SHA1, 6 digits, 30 ' +
    's) and its QR code as SVG, this once: it is stored only encrypted and never answered again, not even to a ' +
    'retry with the same Idempotency-Key. The factor is active after the first good code (admin-totp-verify); until ' +
    'then, enrolling again replaces the secret.',
  refusals: [TOTP_ALREADY_ACTIVE, TOTP_ENROLMENT_CLOSED],
  method: 'POST',
  auth: operatorSignedIn,
  idempotent: false,
  repeat:
    'makes another secret (replacing one never verified): a secret is shown once, so none is kept to answer again',
  response: adminTotpEnrolResponse,
  handler: ({ user }) => adminTotpEnrol(user),
});
