import { z } from 'zod';
import { otpCodeSchema, passwordSchema, phoneSchema, text } from '../validation.ts';

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
