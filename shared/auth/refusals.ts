// The refusals of the auth area: each code declared once (docs/errors.md lists them all). A
// missing, invalid or ended access token is core's `unauthenticated` (shared/core/refusals.ts);
// too many codes is core's `rate_limited`.
import { refusal } from '../core/http.ts';

export const LOGIN_FAILED = refusal({
  code: 'login_failed',
  status: 401,
  when: 'Login: no live login code for the phone, or the phone, code and password do not match (one answer for all, ' +
    'so that nothing tells whether the phone has an account)',
  then: 'Ask the user to check the code and password; after too many wrong tries the code is burnt: send a new one ' +
    'with auth-send-otp',
  message: () => 'Invalid phone number, code or password',
  example: {},
});

export const OTP_INVALID = refusal({
  code: 'otp_invalid',
  status: 409,
  when: 'The one-time code is wrong, expired, already used or burnt after too many wrong tries (sign-up ' +
    'verification, password reset)',
  then: 'Ask the user to check the code, or send a new one (auth-send-otp, auth-forgot-password)',
  message: () => 'The code is invalid or has expired',
  details: () => [{ field: 'otp_code', message: 'is invalid or has expired' }],
  example: {},
});

export const PHONE_NOT_VERIFIED = refusal<{ minutes: number }>({
  code: 'phone_not_verified',
  status: 409,
  when: 'Sign-up for a phone that has no live sign-up verification (never verified, or verified too long ago)',
  then: 'Verify the phone with auth-send-otp and auth-verify (context signup), then sign up within the minutes named',
  message: () => 'This phone number has not been verified for sign-up',
  details: (f) => [{
    field: 'phone',
    message:
      `has not been verified: verify it with auth-verify (context signup) first, then sign up within ${f.minutes} minutes`,
  }],
  example: { minutes: 15 },
});

export const SIGNUP_IN_PROGRESS = refusal({
  code: 'signup_in_progress',
  status: 409,
  when: 'Another sign-up request for the same phone is being processed',
  then: 'Wait a moment and retry; the other request may have created the account (then log in)',
  message: () => 'A sign-up for this phone number is already in progress',
  details: () => [{ field: 'phone', message: 'is being signed up by another request; try again in a moment' }],
  example: {},
});

export const ACCOUNT_EXISTS = refusal({
  code: 'account_exists',
  status: 409,
  when: 'Sign-up for a phone that already has an account',
  then: 'Log in, or reset the password with auth-forgot-password',
  message: () => 'An account already exists for this phone number',
  details: () => [{ field: 'phone', message: 'already has an account; log in or reset the password' }],
  example: {},
});

export const REFRESH_TOKEN_REUSED = refusal({
  code: 'refresh_token_reused',
  status: 401,
  when: 'A refresh token was used again after its grace period: taken for a stolen token, the whole session is ended',
  then: 'Log in again; never send one refresh token twice (keep the newest one from each answer)',
  message: () => 'Refresh token was already used; the session has been ended, log in again',
  example: {},
});

export const REFRESH_TOKEN_INVALID = refusal({
  code: 'refresh_token_invalid',
  status: 401,
  when: 'The refresh token is unknown or expired, or its session has ended',
  then: 'Log in again',
  message: () => 'Invalid or expired refresh token',
  example: {},
});
