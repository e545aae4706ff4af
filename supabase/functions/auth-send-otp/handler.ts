import { endpoint } from '../../../shared/core/endpoint.ts';
import { authSendOtp } from '../../../shared/auth/flows.ts';
import { otpSentResponse, sendOtpBody } from '../../../shared/auth/schema.ts';

export default endpoint({
  name: 'auth-send-otp',
  summary: 'Sends a one-time code by SMS, for sign-up or login',
  refusals: {
    429: 'Too many codes for this phone or address; the message and Retry-After say how long to wait',
  },
  method: 'POST',
  auth: 'none',
  body: sendOtpBody,
  response: otpSentResponse,
  handler: ({ body, clientIp }) => authSendOtp(body.phone, body.context, clientIp),
});
