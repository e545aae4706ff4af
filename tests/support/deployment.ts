// A deployment's environment for the configuration's unit suites: the pooler's database URL and
// fresh strong secrets and provider keys, so every production rule passes (docs/security.md).
import { randomBytes } from 'node:crypto';

/** A fresh random secret, long enough for every rule. */
export const strong = () => randomBytes(32).toString('base64url');

/** A deployment's database: Supabase's transaction pooler, not a loopback address. */
export const PROD_DB = 'postgres://postgres.abcdefgh:pw-value-123@aws-0-eu-west-2.pooler.supabase.com:6543/postgres';

/** Every secret a deployment needs, each fresh and strong. */
export const strongSecrets = () => ({
  AUTH_JWT_SECRET: strong(),
  PAYMENTS_WEBHOOK_SECRET: strong(),
  KYC_WEBHOOK_SECRET: strong(),
  IDENTITY_WEBHOOK_SECRET: strong(),
  IDENTITY_HASH_KEY: strong(),
  PHONE_HASH_KEY: strong(),
  JOBS_SECRET: strong(),
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  TOTP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
});

/** A deployment's environment that passes every rule. */
export const deployment = (): Record<string, string | undefined> => ({
  DATABASE_URL: PROD_DB,
  ...strongSecrets(),
  PAYMENTS_PROVIDER: 'paystack',
  PAYSTACK_SECRET_KEY: `sk_live_${randomBytes(20).toString('hex')}`,
  SMS_PROVIDER: 'termii',
  TERMII_API_KEY: `TL${randomBytes(24).toString('hex')}`,
  KYC_PROVIDER: 'sumsub',
  SUMSUB_APP_TOKEN: `prd:${randomBytes(24).toString('hex')}`,
  SUMSUB_SECRET_KEY: randomBytes(24).toString('hex'),
  IDENTITY_PROVIDER: 'http',
  IDENTITY_BASE_URL: 'https://identity.example.com/v1',
  IDENTITY_API_KEY: randomBytes(24).toString('hex'),
});
