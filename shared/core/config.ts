// Configuration, parsed once from the environment with zod. A missing or malformed value stops
// start-up with the variable's name (never its value: some are secrets).
import { z } from 'zod';
import { readEnv } from './env.ts';
import { isPublishedSecret } from './published-secrets.ts';
import { fromBase64 } from './crypto.ts';

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const secret = z.string().min(16, 'must be at least 16 characters');

const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;

/** The origins of a CORS_ALLOW_ORIGIN list: its comma-separated entries, trimmed. */
export const corsOrigins = (value: string): string[] => value.split(',').map((o) => o.trim()).filter((o) => o !== '');

/** `*` alone, or one or more origins (scheme, host, optional port; no path or trailing slash). */
export function isCorsSetting(value: string): boolean {
  if (value.trim() === '*') return true;
  const origins = corsOrigins(value);
  return origins.length > 0 && origins.every((o) => ORIGIN.test(o));
}

/** Whether a value is the base64 of exactly 32 bytes (an AES-256 key). */
export function isKey32Base64(value: string): boolean {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(value.trim())) return false;
  try {
    return fromBase64(value.trim()).length === 32;
  } catch {
    return false;
  }
}

const schema = z
  .object({
    DATABASE_URL: z.string().min(1).optional(),
    SUPABASE_DB_URL: z.string().min(1).optional(),
    // A connection that keeps its session (Supavisor's session mode, port 5432, or a direct one):
    // where a server LISTENs for the wake-ups of its live streams (docs/events.md). Unset or empty:
    // each server polls the event log every second instead. Never the transaction pooler, which
    // drops LISTEN silently.
    DATABASE_SESSION_URL: z.string().min(1).optional(),
    // Connections each function instance may hold (postgres.js pool). Unset: 2 in a deployment,
    // where every instance has its own pool through the transaction pooler, and 10 on the local
    // stack, where one server process serves every function (and the test suite's parallel calls).
    DB_POOL_MAX: z.coerce.number().int().min(1).optional(),
    PORT: int(54321, 1),
    // Set to 1 by `npm start` (and the test harness) for the database it created itself. Together
    // with a loopback database address it is what "the local stack" means; anything else is a
    // deployment, held to the production rules below.
    ESCROW_LOCAL_STACK: z.string().optional(),
    // A staging deployment: the sandbox payments provider and the SMS outbox are allowed outside
    // the local stack. Secrets are held to the production rules all the same.
    ALLOW_SANDBOX_PROVIDERS: z.enum(['true', 'false']).default('false'),

    AUTH_JWT_SECRET: z.string().min(32, 'must be at least 32 characters'),
    AUTH_JWT_ISSUER: z.string().min(1).default('escrow-service'),

    PAYMENTS_WEBHOOK_SECRET: secret,
    KYC_WEBHOOK_SECRET: secret,
    IDENTITY_WEBHOOK_SECRET: secret,
    // Presented by the scheduler (pg_cron's HTTP call, or the local server) to jobs-run.
    JOBS_SECRET: secret,
    // The key outbound webhook endpoints' signing secrets are stored under (AES-256-GCM,
    // shared/webhooks/secrets.ts): the base64 of 32 bytes. `npm start` fills a published local value;
    // a deployment must set its own (productionProblems).
    WEBHOOK_SECRET_KEY: z.string().refine(isKey32Base64, 'must be the base64 of 32 bytes (openssl rand -base64 32)')
      .optional(),
    // The key operators' TOTP secrets are stored under (AES-256-GCM, shared/operators/totp.ts): the
    // base64 of 32 bytes. `npm start` fills a published local value; a deployment must set its own.
    TOTP_ENCRYPTION_KEY: z.string().refine(isKey32Base64, 'must be the base64 of 32 bytes (openssl rand -base64 32)')
      .optional(),
    // Outbound webhooks are attempted right after the write that caused them (and by the job every
    // minute). false leaves them to the job alone: the test stack, whose suites move time by
    // running the job and must be the only ones sending.
    WEBHOOK_SEND_AFTER_WRITES: z.enum(['true', 'false']).default('true'),

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

    // KYC (docs/kyc.md): `sandbox` answers locally and posts signed Sumsub-shaped webhooks back to
    // webhook-kyc; `sumsub` asks Sumsub's API for SDK access tokens.
    KYC_PROVIDER: z.enum(['sandbox', 'sumsub']).default('sandbox'),
    SUMSUB_APP_TOKEN: z.string().min(1).optional(),
    SUMSUB_SECRET_KEY: z.string().min(1).optional(),
    SUMSUB_BASE_URL: z.url().default('https://api.sumsub.com'),
    // The Sumsub level names of tiers 1 and 2; webhook-kyc maps a levelName to its check type by them.
    KYC_LEVEL_TIER1: z.string().min(1).max(100).default('tier-1'),
    KYC_LEVEL_TIER2: z.string().min(1).max(100).default('tier-2'),
    // Lifetime of the SDK access token kyc-start returns, in seconds.
    KYC_TOKEN_TTL_SECONDS: int(600, 60),
    // Identity checks (NIN, BVN, CAC, TIN, bank account, director): `sandbox` answers locally and
    // posts the result to webhook-identity; `http` asks IDENTITY_BASE_URL (docs/kyc.md, the contract).
    IDENTITY_PROVIDER: z.enum(['sandbox', 'http']).default('sandbox'),
    IDENTITY_BASE_URL: z.url().optional(),
    IDENTITY_API_KEY: z.string().min(1).optional(),
    // The key of the keyed hash identity numbers are stored as (with their last 4 digits only).
    IDENTITY_HASH_KEY: secret,
    // The key of the keyed hash (HMAC-SHA-256) a deleted account's phone is replaced by (account-delete).
    PHONE_HASH_KEY: secret,
    // identity-verify requests one user may make in 24 hours for each type of check (each costs a
    // provider lookup); per type, so a business that needs all six checks gets them in a day.
    IDENTITY_VERIFY_MAX_PER_TYPE_PER_DAY: int(3, 1),

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

    // `*`, or a comma-separated list of origins (scheme, host and port, no path): a request's Origin
    // is echoed only when listed (allowOriginFor).
    CORS_ALLOW_ORIGIN: z.string().min(1).default('*').refine(
      isCorsSetting,
      'must be * or a comma-separated list of origins such as https://console.example.com',
    ),
    // How many proxies in front of the functions append to X-Forwarded-For (see clientAddress).
    TRUSTED_PROXY_HOPS: int(1, 1),

    // Escrows whose invite SMS goes out at once (payer_role counterparty), per initiator.
    INVITE_MAX_PER_HOUR: int(20, 1),
    INVITE_MAX_PER_DAY: int(100, 1),
    // Invite SMS one phone receives in 24 hours from all initiators together; later invites are
    // created without an SMS.
    INVITE_SMS_MAX_PER_PHONE_PER_DAY: int(3, 0),
    // Invite SMS one initiator's escrows send in 24 hours, whoever pays (an initiator-paid escrow's
    // goes out at funding). Over it a funding's invite is in the app only; an escrow the
    // counterparty pays is 429 (docs/escrow.md#invitations-and-their-limits).
    INVITE_SMS_MAX_PER_INITIATOR_PER_DAY: int(20, 0),
    // The smallest escrow amount, in kobo, whose review counts toward a public rating and whose
    // release counts as a completed deal (docs/reviews.md#which-reviews-count): NGN 1,000.
    REVIEW_MIN_AMOUNT: int(100_000, 1),
    // Messages one user sends, in all conversations together (docs/conversations.md).
    MESSAGE_MAX_PER_MINUTE: int(30, 1),
    MESSAGE_MAX_PER_HOUR: int(600, 1),

    // Live streams (docs/events.md): the comment sent this often re-checks the session; a stream
    // ends after STREAM_MAX_SECONDS with a hint to reconnect; one user holds at most
    // STREAM_MAX_PER_USER streams on one server.
    STREAM_HEARTBEAT_SECONDS: int(15, 1),
    STREAM_MAX_SECONDS: int(120, 5),
    STREAM_MAX_PER_USER: int(5, 1),

    // Requests one merchant API key may make per minute (docs/merchants.md); over it a 429 with
    // Retry-After.
    MERCHANT_KEY_MAX_PER_MINUTE: int(600, 1),

    // Four eyes (docs/operators.md#four-eyes): an operator action moving more than this many kobo
    // (NGN 1,000,000) waits for a second operator's approval.
    FOUR_EYES_MIN_AMOUNT: int(100_000_000, 0),
    // SMS one merchant's escrows may send (docs/merchants.md#sms-about-merchant-escrows), besides each
    // phone's daily invite cap; over either an escrow is created without its SMS.
    MERCHANT_SMS_MAX_PER_HOUR: int(200, 0),
    MERCHANT_SMS_MAX_PER_DAY: int(2_000, 0),
    // Checkouts one merchant's escrows may ask the payments provider for an hour (a new escrow, or a
    // replay after a checkout the provider could not start; docs/merchants.md#merchant-escrows);
    // over it a 429.
    MERCHANT_ESCROW_MAX_PER_HOUR: int(1_000, 1),
    // Hours an unfunded merchant escrow waits for its buyer's payment before the job cancels it
    // (docs/merchants.md#funding-through-the-checkout).
    MERCHANT_ESCROW_EXPIRY_HOURS: int(72, 1),
  })
  .superRefine((env, ctx) => {
    if (!env.DATABASE_URL && !env.SUPABASE_DB_URL) {
      ctx.addIssue({ code: 'custom', path: ['DATABASE_URL'], message: 'required (or SUPABASE_DB_URL)' });
    }
    if (env.SMS_PROVIDER === 'termii' && !env.TERMII_API_KEY) {
      ctx.addIssue({ code: 'custom', path: ['TERMII_API_KEY'], message: 'required when SMS_PROVIDER=termii' });
    }
    if (env.KYC_PROVIDER === 'sumsub') {
      for (const name of ['SUMSUB_APP_TOKEN', 'SUMSUB_SECRET_KEY'] as const) {
        if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required when KYC_PROVIDER=sumsub' });
      }
    }
    if (env.IDENTITY_PROVIDER === 'http') {
      for (const name of ['IDENTITY_BASE_URL', 'IDENTITY_API_KEY'] as const) {
        if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required when IDENTITY_PROVIDER=http' });
      }
    }
    if (env.DATABASE_SESSION_URL && isTransactionPooler(env.DATABASE_SESSION_URL)) {
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_SESSION_URL'],
        message:
          "must not be the transaction pooler (port 6543), which drops LISTEN; use the session pooler's port 5432",
      });
    }
    if (env.KYC_LEVEL_TIER1 === env.KYC_LEVEL_TIER2) {
      ctx.addIssue({ code: 'custom', path: ['KYC_LEVEL_TIER2'], message: 'must differ from KYC_LEVEL_TIER1' });
    }
    if (env.PAYMENTS_PROVIDER === 'paystack' && !env.PAYSTACK_SECRET_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['PAYSTACK_SECRET_KEY'],
        message: 'required when PAYMENTS_PROVIDER=paystack',
      });
    }
  });

/** DB_POOL_MAX when unset: a deployment's instance, and the local stack's one server process. */
export const DB_POOL_DEFAULT = { deployment: 2, local: 10 } as const;

export type Config = Omit<z.infer<typeof schema>, 'DB_POOL_MAX'> & {
  DB_POOL_MAX: number;
  databaseUrl: string;
  /** The local stack that `npm start` or the test harness made: the only place `now` is believed. */
  local: boolean;
};

/** Our own secrets: at least 32 characters and never a published value outside the local stack. */
export const SECRET_VARIABLES = [
  'AUTH_JWT_SECRET',
  'PAYMENTS_WEBHOOK_SECRET',
  'KYC_WEBHOOK_SECRET',
  'IDENTITY_WEBHOOK_SECRET',
  'IDENTITY_HASH_KEY',
  'PHONE_HASH_KEY',
  'JOBS_SECRET',
] as const;
/** Keys issued by providers: their length is theirs, but a published one is refused all the same. */
export const PROVIDER_KEY_VARIABLES = [
  'PAYSTACK_SECRET_KEY',
  'TERMII_API_KEY',
  'SUMSUB_APP_TOKEN',
  'SUMSUB_SECRET_KEY',
  'IDENTITY_API_KEY',
] as const;
/** Provider variables and the values allowed only locally or with ALLOW_SANDBOX_PROVIDERS=true. */
const PROVIDERS = [
  { name: 'PAYMENTS_PROVIDER', real: 'paystack', sandbox: 'sandbox' },
  { name: 'SMS_PROVIDER', real: 'termii', sandbox: 'outbox' },
  { name: 'KYC_PROVIDER', real: 'sumsub', sandbox: 'sandbox' },
  { name: 'IDENTITY_PROVIDER', real: 'http', sandbox: 'sandbox' },
] as const;

/** Supavisor's transaction mode listens on 6543 (its session mode on 5432). */
function isTransactionPooler(url: string): boolean {
  try {
    return new URL(url).port === '6543';
  } catch {
    return false;
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function isLoopbackDatabase(url: string): boolean {
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * A deployment never runs on local defaults (docs/security.md). Each problem names the variable, never
 * its value. It reads the environment as given (before defaults, empty values removed), so an unset
 * provider is seen, and it runs whether or not the schema accepted the environment: a missing
 * variable must not hide a published secret or a sandbox provider until the next start. A variable
 * the schema refused already (missing, too short, malformed) is left to the schema's own problem.
 */
function productionProblems(raw: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const v = raw[name];
    if (v === undefined) continue; // the schema names it missing
    if (isPublishedSecret(v)) problems.push(`${name} is a value published in the repository; generate a new secret`);
    else if (v.length < 32) problems.push(`${name} must be at least 32 characters outside the local stack`);
  }
  for (const name of PROVIDER_KEY_VARIABLES) {
    const v = raw[name];
    if (v !== undefined && isPublishedSecret(v)) problems.push(`${name} is a value published in the repository`);
  }
  for (const name of ['WEBHOOK_SECRET_KEY', 'TOTP_ENCRYPTION_KEY'] as const) {
    const v = raw[name];
    if (v === undefined) {
      problems.push(`${name} must be set outside the local stack (the base64 of 32 random bytes)`);
    } else if (isPublishedSecret(v)) {
      problems.push(`${name} is a value published in the repository; generate a new key`);
    }
  }
  const staging = raw.ALLOW_SANDBOX_PROVIDERS === 'true';
  for (const p of PROVIDERS) {
    if (raw[p.name] === undefined) {
      problems.push(`${p.name} must be set outside the local stack (${p.real})`);
    } else if (raw[p.name] === p.sandbox && !staging) {
      problems.push(
        `${p.name}=${p.sandbox} is refused outside the local stack; use ${p.real}, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment`,
      );
    }
  }
  if (!staging && raw.PAYMENTS_PROVIDER === 'paystack' && raw.PAYSTACK_SECRET_KEY?.startsWith('sk_test_')) {
    problems.push(
      'PAYSTACK_SECRET_KEY is a Paystack test key; use a live key, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    );
  }
  if (!staging && raw.KYC_PROVIDER === 'sumsub' && raw.SUMSUB_APP_TOKEN?.startsWith('sbx:')) {
    problems.push(
      'SUMSUB_APP_TOKEN is a Sumsub sandbox token; use a production token, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    );
  }
  return problems;
}

/** The variable a problem is about: the name it starts with. */
const variableOf = (problem: string) => /^[A-Z][A-Z0-9_]*/.exec(problem)?.[0] ?? '';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    // one line each, so a log or a terminal shows every problem of a start at once
    super(
      `invalid configuration (${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}):\n${
        problems.map((p) => `  - ${p}`).join('\n')
      }`,
    );
    this.name = 'ConfigError';
  }
}

/** A schema issue in words: the variable's name and what is wrong, never the value. */
function describeIssue(i: z.core.$ZodIssue, cleaned: Record<string, string>): string {
  const name = i.path.join('.');
  const missing = i.code === 'invalid_type' && cleaned[name] === undefined;
  if (missing) return `${name} is missing`;
  // never the value itself: some of these are secrets
  if (i.code === 'invalid_type') {
    return `${name} must be a ${i.expected === 'number' ? 'whole number' : i.expected}`;
  }
  return `${name} ${i.message}`;
}

/**
 * Parses an environment; throws one ConfigError naming every problem found (values never shown): the
 * schema's (missing or malformed variables) and, outside the local stack, the production rules'
 * together, so that a deployment hears of all of them in one start.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings count as unset, as shells and .env files commonly leave them.
  const cleaned = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  const result = schema.safeParse(cleaned);
  const problems = result.success ? [] : result.error.issues.map((i) => describeIssue(i, cleaned));
  const databaseUrl = result.success
    ? (result.data.DATABASE_URL ?? result.data.SUPABASE_DB_URL) as string
    : cleaned.DATABASE_URL ?? cleaned.SUPABASE_DB_URL;
  // without a database address the marker alone decides (the schema names the address missing)
  const local = cleaned.ESCROW_LOCAL_STACK === '1' && (databaseUrl === undefined || isLoopbackDatabase(databaseUrl));
  if (!local) {
    const named = new Set(problems.map(variableOf));
    problems.push(...productionProblems(cleaned).filter((p) => !named.has(variableOf(p))));
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  const c = result.data;
  const DB_POOL_MAX = c.DB_POOL_MAX ?? (local ? DB_POOL_DEFAULT.local : DB_POOL_DEFAULT.deployment);
  return { ...c, DB_POOL_MAX, databaseUrl: databaseUrl as string, local };
}

let cached: Config | undefined;

export function getConfig(): Config {
  cached ??= parseConfig(readEnv());
  return cached;
}
