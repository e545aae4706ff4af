import { endpoint } from '../../../shared/endpoint.ts';
import { sendOtp } from '../../../shared/auth/flows.ts';
import { sendOtpBody } from '../../../shared/schemas/auth.ts';

export default endpoint({
  name: 'auth-send-otp',
  method: 'POST',
  auth: 'none',
  body: sendOtpBody,
  handler: ({ body, clientIp }) => sendOtp(body.phone, body.context, clientIp),
});
