import { endpoint } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED, UNAUTHENTICATED } from '../../../shared/core/refusals.ts';
import { authenticate } from '../../../shared/auth/session.ts';
import { authSendDeleteCode, authSendOtp } from '../../../shared/auth/flows.ts';
import { otpSentResponse, sendOtpBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-send-otp',
  summary: 'Sends a one-time code by SMS, for sign-up, login or account deletion',
  description: 'Sign-up and login: anyone, without a token. A 6-digit code for the phone and context, valid 10 ' +
    'minutes, replaces any live one; the SMS carries it only when it can be used (sign-up of a new phone, login ' +
    'of an existing account): a sign-up for a registered phone gets a notice without a code, a login for an ' +
    "unknown phone gets nothing. Account deletion (context `account_delete`, no `phone`): a signed-in user's " +
    "bearer token is required (401 without), and the code goes to the account's own phone, in an SMS that says " +
    'it deletes the account; account-delete takes it with the password. Limited by default per phone (a code a ' +
    'minute, 5 an hour) and per client address (30 an hour), spent either way.',
  refusals: [RATE_LIMITED, UNAUTHENTICATED],
  method: 'POST',
  auth: 'none',
  body: sendOtpBody,
  response: otpSentResponse,
  handler: async ({ req, body, clientIp }) =>
    body.context === 'account_delete'
      ? authSendDeleteCode(await authenticate(req), clientIp)
      : authSendOtp(body.phone as string, body.context, clientIp),
});
