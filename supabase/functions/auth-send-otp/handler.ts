import { endpoint } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { authSendOtp } from '../../../shared/auth/flows.ts';
import { otpSentResponse, sendOtpBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-send-otp',
  summary: 'Sends a one-time code by SMS, for sign-up or login',
  description: 'Anyone, without a token. A 6-digit code for the phone and context, valid 10 minutes, replaces any ' +
    'live one; the SMS carries it only when it can be used (sign-up of a new phone, login of an existing account): ' +
    'a sign-up for a registered phone gets a notice without a code, a login for an unknown phone gets nothing. ' +
    'Limited by default per phone (a code a minute, 5 an hour) and per client address (30 an hour), spent either ' +
    'way.',
  refusals: [RATE_LIMITED],
  method: 'POST',
  auth: 'none',
  body: sendOtpBody,
  response: otpSentResponse,
  handler: ({ body, clientIp }) => authSendOtp(body.phone, body.context, clientIp),
});
