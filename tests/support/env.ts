// Tests that import shared/ directly (under Node) read the same configuration as the server.
import { inject } from 'vitest';
import {
  TEST_IDENTITY_WEBHOOK_SECRET,
  TEST_JOBS_SECRET,
  TEST_JWT_SECRET,
  TEST_KYC_WEBHOOK_SECRET,
  TEST_PAYMENTS_WEBHOOK_SECRET,
} from './stack.ts';
import { TEST_SECRETS } from '../../shared/core/published-secrets.ts';

process.env.DATABASE_URL = inject('databaseUrl');
// the test stack is a local stack (a loopback database the harness created), as `npm start` marks it
process.env.ESCROW_LOCAL_STACK = '1';
process.env.AUTH_JWT_SECRET = TEST_JWT_SECRET;
process.env.PAYMENTS_WEBHOOK_SECRET = TEST_PAYMENTS_WEBHOOK_SECRET;
process.env.KYC_WEBHOOK_SECRET = TEST_KYC_WEBHOOK_SECRET;
process.env.IDENTITY_WEBHOOK_SECRET = TEST_IDENTITY_WEBHOOK_SECRET;
process.env.SMS_PROVIDER = 'outbox';
process.env.JOBS_SECRET = TEST_JOBS_SECRET;
process.env.PAYMENTS_PROVIDER = 'paystack';
process.env.PAYSTACK_SECRET_KEY = 'sk_test_fake_0123456789';
process.env.PAYSTACK_BASE_URL = inject('fakePaystackUrl');
process.env.IDENTITY_HASH_KEY = TEST_SECRETS.IDENTITY_HASH_KEY;
process.env.PHONE_HASH_KEY = TEST_SECRETS.PHONE_HASH_KEY;
process.env.WEBHOOK_SECRET_KEY = TEST_SECRETS.WEBHOOK_SECRET_KEY;
process.env.TOTP_ENCRYPTION_KEY = TEST_SECRETS.TOTP_ENCRYPTION_KEY;
// the real Sumsub and identity adapters, pointed at the KYC fake (tests/fakes/kyc.ts)
process.env.KYC_PROVIDER = 'sumsub';
process.env.SUMSUB_APP_TOKEN = TEST_SECRETS.SUMSUB_APP_TOKEN;
process.env.SUMSUB_SECRET_KEY = TEST_SECRETS.SUMSUB_SECRET_KEY;
process.env.SUMSUB_BASE_URL = inject('fakeKycUrl');
process.env.IDENTITY_PROVIDER = 'http';
process.env.IDENTITY_API_KEY = TEST_SECRETS.IDENTITY_API_KEY;
process.env.IDENTITY_BASE_URL = `${inject('fakeKycUrl')}/identity`;
