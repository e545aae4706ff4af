// Request and response schemas of the operators area: the second factor (admin-totp-enrol,
// admin-totp-verify).
import { z } from 'zod';
import { timestamp } from '../core/schema.ts';
import { text } from '../core/validation.ts';

/** Every operator action's `reason` (10-500 characters): kept in the audit with the action. */
export const operatorReason = text(10, 500).meta({
  description: 'Why you act: kept in the audit with the action (10-500 characters)',
  examples: ['The provider confirmed the payment; the webhook was lost'],
});

export const adminTotpVerifyBody = z.strictObject({
  code: z.string().regex(/^[0-9]{6}$/, 'must be exactly 6 digits').meta({
    description: 'The 6-digit code the authenticator shows now (RFC 6238: SHA-1, 30-second steps)',
    examples: ['287082'],
  }),
});

export const adminTotpEnrolResponse = z.strictObject({
  otpauth_uri: z.string().meta({
    description: 'The secret as an otpauth:// URI (SHA1, 6 digits, 30 s), shown this once: enter it or scan qr_svg',
  }),
  qr_svg: z.string().meta({ description: 'The same URI as a QR code, an SVG document' }),
});

export const adminTotpVerifyResponse = z.strictObject({
  passed: z.literal(true),
  expires_at: timestamp.describe("When this session's pass ends (12 hours after the code); verify again after it"),
});

export type AdminTotpEnrolResponse = z.infer<typeof adminTotpEnrolResponse>;
export type AdminTotpVerifyResponse = z.infer<typeof adminTotpVerifyResponse>;
