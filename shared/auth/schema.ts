import { z } from 'zod';
import { chars, nameText, otpCodeSchema, passwordSchema, phoneSchema } from '../core/validation.ts';
import { onlyWhen, withRules } from '../core/rules.ts';
import { count, e164Phone, uuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const sendOtpBody = withRules(
  z.strictObject({
    phone: phoneSchema.optional(),
    context: z.enum(['signup', 'login', 'account_delete']),
  }),
  // account_delete: the code goes to the signed-in caller's own phone, never to one named here
  [onlyWhen('phone', { context: ['signup', 'login'] }, { required: true })],
);

export const verifyBody = withRules(
  z.strictObject({
    phone: phoneSchema,
    otp_code: otpCodeSchema,
    context: z.enum(['signup', 'login']),
    password: chars(1, 128).optional(),
  }),
  [onlyWhen('password', { context: 'login' }, { required: true })],
);

export const signupBody = z.strictObject({
  phone: phoneSchema,
  first_name: nameText(1, 100),
  last_name: nameText(1, 100),
  password: passwordSchema,
});

export const refreshBody = z.strictObject({
  refresh_token: chars(1, 512),
});

export const forgotPasswordBody = z.strictObject({ phone: phoneSchema });

export const resetPasswordBody = z
  .strictObject({
    phone: phoneSchema,
    otp_code: otpCodeSchema,
    password: passwordSchema,
    // JSON Schema cannot compare two fields: the document says it in words
    confirm_password: z.string().meta({ description: 'Must equal password, character for character' }),
  })
  .refine((b) => b.password === b.confirm_password, {
    path: ['confirm_password'],
    message: 'must match password',
  });

// ---- responses (the `data` of the success envelope) ----------------------------------------

/** The spec's Session: auth-signup, auth-verify (login), auth-refresh. */
export const sessionResponse = z.strictObject({
  user: z.strictObject({ id: uuid, phone: e164Phone }),
  session: z.strictObject({
    access_token: z.string().min(1),
    refresh_token: z.string().min(1),
    expires_in: count,
    token_type: z.literal('bearer'),
  }),
});
export type SessionResponse = z.input<typeof sessionResponse>;

/** auth-send-otp: the same answer whether or not the phone has an account. */
export const otpSentResponse = z.strictObject({ sent: z.literal(true), expires_in: count, resend_after: count });
export type OtpSentResponse = z.input<typeof otpSentResponse>;

/** auth-verify with context signup: the phone may sign up within expires_in seconds. */
export const phoneVerifiedResponse = z.strictObject({ verified: z.literal(true), expires_in: count });
export type PhoneVerifiedResponse = z.input<typeof phoneVerifiedResponse>;

/** auth-verify: a verified phone (context signup) or a session (context login). */
export const verifyResponse = z.union([phoneVerifiedResponse, sessionResponse]);

export const logoutResponse = z.strictObject({ logged_out: z.literal(true) });
export type LogoutResponse = z.input<typeof logoutResponse>;

/** auth-forgot-password: the same answer whether or not the phone has an account. */
export const forgotPasswordResponse = z.strictObject({ sent: z.literal(true), expires_in: count });
export type ForgotPasswordResponse = z.input<typeof forgotPasswordResponse>;

export const resetPasswordResponse = z.strictObject({ password_reset: z.literal(true) });
export type ResetPasswordResponse = z.input<typeof resetPasswordResponse>;
