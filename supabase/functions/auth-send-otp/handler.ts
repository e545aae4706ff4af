import { endpoint } from '../../../shared/endpoint.ts';
import { sendOtp } from '../../../shared/auth/flows.ts';
import { otpSentResponse, sendOtpBody } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-send-otp',
  method: 'POST',
  auth: 'none',
  body: sendOtpBody,
  response: otpSentResponse,
  handler: ({ body, clientIp }) => sendOtp(body.phone, body.context, clientIp),
});
