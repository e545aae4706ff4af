// Configuration, parsed once from the environment with zod. A missing or malformed value stops
// start-up with the variable's name (never its value: some are secrets).
import { z } from 'zod';
import { readEnv } from './env.ts';

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const secret = z.string().min(16, 'must be at least 16 characters');

const schema = z
  .object({
    DATABASE_URL: z.string().min(1).optional(),
    SUPABASE_DB_URL: z.string().min(1).optional(),
    DB_POOL_MAX: int(10, 1),
    PORT: int(54321, 1),

    AUTH_JWT_SECRET: z.string().min(32, 'must be at least 32 characters'),
    AUTH_JWT_ISSUER: z.string().min(1).default('escrow-service'),

    PAYMENTS_WEBHOOK_SECRET: secret,
    KYC_WEBHOOK_SECRET: secret,
    IDENTITY_WEBHOOK_SECRET: secret,
    // Presented by the scheduler (pg_cron's HTTP call, or the local server) to jobs-run.
    JOBS_SECRET: secret,

    PAYMENTS_PROVIDER: z.enum(['paystack', 'sandbox']).default('sandbox'),
    PAYSTACK_SECRET_KEY: z.string().min(1).optional(),
    PAYSTACK_BASE_URL: z.url().default('https://api.paystack.co'),
    PAYSTACK_PREFERRED_BANK: z.string().min(1).default('wema-bank'),
    // Paystack needs an email per customer; users are phone-first, so we give each one an
    // address under this domain (<user id>@domain). Nothing is ever sent to it.
    PAYMENTS_EMAIL_DOMAIN: z.string().min(3).default('customers.escrow.ng'),
    // Where the sandbox provider delivers its signed webhooks (the local server by default).
    SANDBOX_WEBHOOK_URL: z.url().optional(),
    SANDBOX_WEBHOOK_DELAY_MS: int(300, 0),

    SMS_PROVIDER: z.enum(['outbox', 'termii']).default('outbox'),
    TERMII_API_KEY: z.string().min(1).optional(),
    TERMII_BASE_URL: z.url().default('https://v3.api.termii.com'),
    TERMII_SENDER_ID: z.string().min(1).max(11).default('Escrow'),
    TERMII_CHANNEL: z.enum(['dnd', 'generic', 'whatsapp']).default('dnd'),

    OTP_TTL_SECONDS: int(600, 60),
    OTP_RESEND_SECONDS: int(60, 0),
    OTP_MAX_PER_HOUR: int(5, 1),
    OTP_MAX_ATTEMPTS: int(5, 1),
    OTP_IP_MAX_PER_HOUR: int(30, 1),
    PHONE_VERIFICATION_TTL_SECONDS: int(1800, 60),
    REFRESH_REUSE_GRACE_SECONDS: int(10, 0),
    PASSWORD_PBKDF2_ITERATIONS: int(600_000, 600_000),

    CORS_ALLOW_ORIGIN: z.string().min(1).default('*'),
    // How many proxies in front of the functions append to X-Forwarded-For (see clientAddress).
    TRUSTED_PROXY_HOPS: int(1, 1),
  })
  .superRefine((env, ctx) => {
    if (!env.DATABASE_URL && !env.SUPABASE_DB_URL) {
      ctx.addIssue({ code: 'custom', path: ['DATABASE_URL'], message: 'required (or SUPABASE_DB_URL)' });
    }
    if (env.SMS_PROVIDER === 'termii' && !env.TERMII_API_KEY) {
      ctx.addIssue({ code: 'custom', path: ['TERMII_API_KEY'], message: 'required when SMS_PROVIDER=termii' });
    }
    if (env.PAYMENTS_PROVIDER === 'paystack' && !env.PAYSTACK_SECRET_KEY) {
      ctx.addIssue({ code: 'custom', path: ['PAYSTACK_SECRET_KEY'], message: 'required when PAYMENTS_PROVIDER=paystack' });
    }
  });

export type Config = z.infer<typeof schema> & { databaseUrl: string };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses an environment; throws ConfigError naming every bad variable (values never shown). */
export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings count as unset, as shells and .env files commonly leave them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = i.path.join('.');
        const missing = i.code === 'invalid_type' && cleaned[name] === undefined;
        if (missing) return `${name} is missing`;
        // never the value itself: some of these are secrets
        if (i.code === 'invalid_type') return `${name} must be a ${i.expected === 'number' ? 'whole number' : i.expected}`;
        return `${name} ${i.message}`;
      }),
    );
  }
  const c = result.data;
  return { ...c, databaseUrl: (c.DATABASE_URL ?? c.SUPABASE_DB_URL) as string };
}

let cached: Config | undefined;

export function getConfig(): Config {
  cached ??= parseConfig(readEnv());
  return cached;
}
