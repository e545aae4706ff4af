// The closed lists of values the auth area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

/**
 * What a one-time code is for (private.otps.context); sign-up, login and account-deletion codes are
 * requested with auth-send-otp, reset codes with auth-forgot-password.
 */
export const OTP_CONTEXTS = ['signup', 'login', 'reset', 'account_delete'] as const;
export type OtpContext = (typeof OTP_CONTEXTS)[number];
