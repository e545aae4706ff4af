import { z } from 'zod';
import { otpCodeSchema, passwordSchema, phoneSchema, text } from '../core/validation.ts';
import { count, e164Phone, uuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const sendOtpBody = z.strictObject({
  phone: phoneSchema,
  context: z.enum(['signup', 'login']),
});

export const verifyBody = z
  .strictObject({
    phone: phoneSchema,
    otp_code: otpCodeSchema,
    context: z.enum(['signup', 'login']),
    password: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters').optional(),
  })
  .superRefine((b, ctx) => {
    if (b.context === 'login' && b.password === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'is required when context is login' });
    }
    if (b.context === 'signup' && b.password !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'is only accepted when context is login' });
    }
  });

export const signupBody = z.strictObject({
  phone: phoneSchema,
  first_name: text(1, 100),
  last_name: text(1, 100),
  password: passwordSchema,
});

export const refreshBody = z.strictObject({
  refresh_token: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters'),
});

export const forgotPasswordBody = z.strictObject({ phone: phoneSchema });

export const resetPasswordBody = z
  .strictObject({
    phone: phoneSchema,
    otp_code: otpCodeSchema,
    password: passwordSchema,
    confirm_password: z.string(),
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
