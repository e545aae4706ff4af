import { z } from 'zod';
import { chars, otpCodeSchema } from '../core/validation.ts';

/** account-delete: the password and a code from auth-send-otp with the context account_delete. */
export const accountDeleteBody = z.strictObject({
  password: chars(1, 128),
  otp_code: otpCodeSchema,
});

/** account-delete: the account is gone; every token of it is refused from now on. */
export const accountDeletedResponse = z.strictObject({
  deleted: z.literal(true),
  sessions_ended: z.number().int().min(0).describe('How many sessions of the account ended (this one included)'),
});
export type AccountDeletedResponse = z.input<typeof accountDeletedResponse>;
