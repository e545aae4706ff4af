// Every secret value that is written down in this repository, in one place: the local-only
// defaults `npm start` fills in, the test suite's values and the placeholders of .env.example.
// Anyone can read them, so outside the local stack configuration refuses each of them
// (shared/core/config.ts). tests/unit/production-config.clock.test.ts fails when .env.example gains a secret
// value that is not listed here.

/** What `npm start` fills in for unset secrets on the local stack (scripts/start.ts). */
export const LOCAL_SECRETS = {
  AUTH_JWT_SECRET: 'local-only-jwt-secret-change-me-in-production-0123456789',
  PAYMENTS_WEBHOOK_SECRET: 'local-only-payments-webhook-secret',
  KYC_WEBHOOK_SECRET: 'local-only-kyc-webhook-secret',
  IDENTITY_WEBHOOK_SECRET: 'local-only-identity-webhook-secret',
  IDENTITY_HASH_KEY: 'local-only-identity-hash-key-0123456789',
  PHONE_HASH_KEY: 'local-only-phone-hash-key-0123456789',
  JOBS_SECRET: 'local-only-jobs-secret-0123456789',
  // the base64 of 32 bytes: the ASCII of "local-only-webhook-secret-key-32"
  WEBHOOK_SECRET_KEY: 'bG9jYWwtb25seS13ZWJob29rLXNlY3JldC1rZXktMzI=',
  // the base64 of 32 bytes: the ASCII of "local-only-totp-encryption-key32"
  TOTP_ENCRYPTION_KEY: 'bG9jYWwtb25seS10b3RwLWVuY3J5cHRpb24ta2V5MzI=',
} as const;

/** The test stack's secrets (tests/support/stack.ts). */
export const TEST_SECRETS = {
  AUTH_JWT_SECRET: 'test-suite-jwt-secret-0123456789abcdefghijklmnop',
  PAYMENTS_WEBHOOK_SECRET: 'test-suite-payments-webhook-secret',
  KYC_WEBHOOK_SECRET: 'test-suite-kyc-webhook-secret',
  IDENTITY_WEBHOOK_SECRET: 'test-suite-identity-webhook-secret',
  IDENTITY_HASH_KEY: 'test-suite-identity-hash-key-0123456789',
  PHONE_HASH_KEY: 'test-suite-phone-hash-key-0123456789',
  JOBS_SECRET: 'test-suite-jobs-secret-0123456789',
  PAYSTACK_SECRET_KEY: 'sk_test_fake_0123456789',
  SUMSUB_APP_TOKEN: 'sbx:test-suite-sumsub-app-token',
  SUMSUB_SECRET_KEY: 'test-suite-sumsub-secret-key',
  IDENTITY_API_KEY: 'test-suite-identity-api-key',
  // the base64 of 32 bytes: the ASCII of "test-suite-webhook-secret-key-32"
  WEBHOOK_SECRET_KEY: 'dGVzdC1zdWl0ZS13ZWJob29rLXNlY3JldC1rZXktMzI=',
  // the base64 of 32 bytes: the ASCII of "test-suite-totp-encryption-key32"
  TOTP_ENCRYPTION_KEY: 'dGVzdC1zdWl0ZS10b3RwLWVuY3J5cHRpb24ta2V5MzI=',
} as const;

/** The placeholders of .env.example. */
export const EXAMPLE_PLACEHOLDERS = [
  'replace-me-with-at-least-32-random-characters',
  'replace-me-payments-webhook-secret',
  'replace-me-kyc-webhook-secret',
  'replace-me-identity-webhook-secret',
  'replace-me-identity-hash-key-at-least-32-characters',
  'replace-me-phone-hash-key-at-least-32-characters',
  'replace-me-with-a-long-random-secret',
] as const;

const PUBLISHED = new Set<string>([
  ...Object.values(LOCAL_SECRETS),
  ...Object.values(TEST_SECRETS),
  ...EXAMPLE_PLACEHOLDERS,
]);

/** The words our published values are built from: a variant of one of them is published too. */
const PUBLISHED_WORDS = /replace-me|change-me|local-only|test-suite/i;

export function isPublishedSecret(value: string): boolean {
  return PUBLISHED.has(value) || PUBLISHED_WORDS.test(value);
}
