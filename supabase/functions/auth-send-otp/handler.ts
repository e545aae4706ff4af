import { endpoint } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { authSendOtp } from '../../../shared/auth/flows.ts';
import { otpSentResponse, sendOtpBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-send-otp',
  summary: 'Sends a one-time code by SMS, for sign-up or login',
  refusals: [RATE_LIMITED],
  method: 'POST',
  auth: 'none',
  body: sendOtpBody,
  response: otpSentResponse,
  handler: ({ body, clientIp }) => authSendOtp(body.phone, body.context, clientIp),
});
