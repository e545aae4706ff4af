// docs/security.md: outside the local stack the configuration refuses published or short secrets and
// unset or sandbox providers (ALLOW_SANDBOX_PROVIDERS=true allows the sandboxes for staging), names
// each variable and never a value; and a function whose configuration is refused serves a plain 500.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, PROVIDER_KEY_VARIABLES, SECRET_VARIABLES } from '../../shared/core/config.ts';
import {
  EXAMPLE_PLACEHOLDERS,
  isPublishedSecret,
  LOCAL_SECRETS,
  TEST_SECRETS,
} from '../../shared/core/published-secrets.ts';
import { deployment, PROD_DB } from '../support/deployment.ts';

/** The provider choices: their values are words the problems may name, not secrets. */
const PROVIDER_NAMES = new Set(['PAYMENTS_PROVIDER', 'SMS_PROVIDER', 'KYC_PROVIDER', 'IDENTITY_PROVIDER']);

function problems(env: Record<string, string | undefined>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    for (const [name, value] of Object.entries(env)) {
      if (value && value.length > 6 && !PROVIDER_NAMES.has(name)) {
        expect(e.message, name).not.toContain(value);
      }
    }
    return e.problems;
  }
  return [];
}

describe('configuration outside the local stack', () => {
  it('accepts a complete deployment and marks it not local', () => {
    const c = parseConfig(deployment());
    expect(c.local).toBe(false);
  });

  it('refuses the local defaults of npm start, the test values and the .env.example placeholders, by name', () => {
    for (const published of [LOCAL_SECRETS, TEST_SECRETS] as Record<string, string>[]) {
      const env = { ...deployment() };
      for (const name of SECRET_VARIABLES) if (published[name]) env[name] = published[name];
      const found = problems(env);
      for (const name of SECRET_VARIABLES) {
        if (published[name]) expect(found.some((p) => p.startsWith(`${name} is a value published`)), name).toBe(true);
      }
    }
    const example = { ...deployment() };
    SECRET_VARIABLES.forEach((name, i) => (example[name] = EXAMPLE_PLACEHOLDERS[i]));
    expect(problems(example).filter((p) => p.includes('published')).length).toBe(SECRET_VARIABLES.length);
    // a published provider key, too
    expect(
      problems({
        ...deployment(),
        PAYSTACK_SECRET_KEY: TEST_SECRETS.PAYSTACK_SECRET_KEY,
        ALLOW_SANDBOX_PROVIDERS: 'true',
      }),
    ).toEqual([
      'PAYSTACK_SECRET_KEY is a value published in the repository',
    ]);
    for (const name of ['SUMSUB_APP_TOKEN', 'SUMSUB_SECRET_KEY', 'IDENTITY_API_KEY'] as const) {
      expect(problems({ ...deployment(), [name]: TEST_SECRETS[name], ALLOW_SANDBOX_PROVIDERS: 'true' }), name).toEqual([
        `${name} is a value published in the repository`,
      ]);
    }
  });

  it('refuses WEBHOOK_SECRET_KEY unset, published (local or test value) or not the base64 of 32 bytes', () => {
    expect(problems({ ...deployment(), WEBHOOK_SECRET_KEY: undefined })).toEqual([
      'WEBHOOK_SECRET_KEY must be set outside the local stack (the base64 of 32 random bytes)',
    ]);
    for (const published of [LOCAL_SECRETS.WEBHOOK_SECRET_KEY, TEST_SECRETS.WEBHOOK_SECRET_KEY]) {
      expect(problems({ ...deployment(), WEBHOOK_SECRET_KEY: published })).toEqual([
        'WEBHOOK_SECRET_KEY is a value published in the repository; generate a new key',
      ]);
    }
    for (const malformed of [randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), 'k'.repeat(44)]) {
      expect(problems({ ...deployment(), WEBHOOK_SECRET_KEY: malformed })).toEqual([
        'WEBHOOK_SECRET_KEY must be the base64 of 32 bytes (openssl rand -base64 32)',
      ]);
    }
    // the local stack takes it unset (the queue then cannot sign), never malformed
    const local = {
      ...deployment(),
      DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:54322/postgres',
      ESCROW_LOCAL_STACK: '1',
    };
    expect(parseConfig({ ...local, WEBHOOK_SECRET_KEY: undefined }).WEBHOOK_SECRET_KEY).toBeUndefined();
    expect(parseConfig({ ...local, WEBHOOK_SECRET_KEY: LOCAL_SECRETS.WEBHOOK_SECRET_KEY }).local).toBe(true);
    expect(problems({ ...local, WEBHOOK_SECRET_KEY: 'short' })).toHaveLength(1);
  });

  it('refuses TOTP_ENCRYPTION_KEY unset, published (local or test value) or not the base64 of 32 bytes', () => {
    expect(problems({ ...deployment(), TOTP_ENCRYPTION_KEY: undefined })).toEqual([
      'TOTP_ENCRYPTION_KEY must be set outside the local stack (the base64 of 32 random bytes)',
    ]);
    for (const published of [LOCAL_SECRETS.TOTP_ENCRYPTION_KEY, TEST_SECRETS.TOTP_ENCRYPTION_KEY]) {
      expect(problems({ ...deployment(), TOTP_ENCRYPTION_KEY: published })).toEqual([
        'TOTP_ENCRYPTION_KEY is a value published in the repository; generate a new key',
      ]);
    }
    for (const malformed of [randomBytes(31).toString('base64'), 'k'.repeat(44)]) {
      expect(problems({ ...deployment(), TOTP_ENCRYPTION_KEY: malformed })).toEqual([
        'TOTP_ENCRYPTION_KEY must be the base64 of 32 bytes (openssl rand -base64 32)',
      ]);
    }
  });

  it('takes CORS_ALLOW_ORIGIN as * or a list of origins, and refuses anything else', () => {
    const list = 'https://app.example.ng, https://console.example.ng:8443';
    expect(parseConfig({ ...deployment(), CORS_ALLOW_ORIGIN: list }).CORS_ALLOW_ORIGIN).toBe(list);
    for (const bad of ['https://console.example.ng/', 'console.example.ng', 'https://a.ng,,ftp://b.ng', ' , ']) {
      expect(problems({ ...deployment(), CORS_ALLOW_ORIGIN: bad }), bad).toEqual([
        'CORS_ALLOW_ORIGIN must be * or a comma-separated list of origins such as https://console.example.com',
      ]);
    }
  });

  it('refuses a secret shorter than 32 characters (31 no, 32 yes)', () => {
    for (const name of SECRET_VARIABLES) {
      const short = problems({ ...deployment(), [name]: 'k'.repeat(31) });
      expect(short).toHaveLength(1);
      expect(short[0]).toMatch(new RegExp(`^${name} must be at least 32 characters`));
      expect(problems({ ...deployment(), [name]: 'k'.repeat(32) })).toEqual([]);
    }
  });

  it('refuses unset providers and the sandboxes, unless ALLOW_SANDBOX_PROVIDERS=true marks staging', () => {
    const unset = problems({ ...deployment(), PAYMENTS_PROVIDER: undefined, SMS_PROVIDER: '' });
    expect(unset).toEqual([
      'PAYMENTS_PROVIDER must be set outside the local stack (paystack)',
      'SMS_PROVIDER must be set outside the local stack (termii)',
    ]);
    const sandbox = problems({ ...deployment(), PAYMENTS_PROVIDER: 'sandbox', SMS_PROVIDER: 'outbox' });
    expect(sandbox.map((p) => p.split(' ')[0])).toEqual(['PAYMENTS_PROVIDER=sandbox', 'SMS_PROVIDER=outbox']);
    // a Paystack test key is a sandbox too
    expect(problems({ ...deployment(), PAYSTACK_SECRET_KEY: `sk_test_${randomBytes(20).toString('hex')}` })[0]).toMatch(
      /^PAYSTACK_SECRET_KEY is a Paystack test key/,
    );
    // staging: sandboxes allowed, secrets still held to the rules
    expect(
      problems({
        ...deployment(),
        PAYMENTS_PROVIDER: 'sandbox',
        SMS_PROVIDER: 'outbox',
        ALLOW_SANDBOX_PROVIDERS: 'true',
      }),
    ).toEqual([]);
    expect(
      problems({
        ...deployment(),
        PAYMENTS_PROVIDER: 'sandbox',
        ALLOW_SANDBOX_PROVIDERS: 'true',
        JOBS_SECRET: LOCAL_SECRETS.JOBS_SECRET,
      }),
    ).toEqual([
      'JOBS_SECRET is a value published in the repository; generate a new secret',
    ]);
    // unset providers are refused in staging too: staging says which sandbox it runs
    expect(problems({ ...deployment(), PAYMENTS_PROVIDER: undefined, ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([
      'PAYMENTS_PROVIDER must be set outside the local stack (paystack)',
    ]);
  });

  it('refuses KYC_PROVIDER unset or sandbox, unless ALLOW_SANDBOX_PROVIDERS=true marks staging', () => {
    const noSumsub = { ...deployment(), SUMSUB_APP_TOKEN: undefined, SUMSUB_SECRET_KEY: undefined };
    for (const unset of [undefined, '']) {
      expect(problems({ ...noSumsub, KYC_PROVIDER: unset })).toEqual([
        'KYC_PROVIDER must be set outside the local stack (sumsub)',
      ]);
      // staging says which sandbox it runs
      expect(problems({ ...noSumsub, KYC_PROVIDER: unset, ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([
        'KYC_PROVIDER must be set outside the local stack (sumsub)',
      ]);
    }
    expect(problems({ ...noSumsub, KYC_PROVIDER: 'sandbox' })).toEqual([
      'KYC_PROVIDER=sandbox is refused outside the local stack; use sumsub, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    ]);
    expect(problems({ ...noSumsub, KYC_PROVIDER: 'sandbox', ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([]);
    expect(parseConfig({ ...noSumsub, KYC_PROVIDER: 'sandbox', ALLOW_SANDBOX_PROVIDERS: 'true' }).KYC_PROVIDER).toBe(
      'sandbox',
    );
  });

  it('refuses IDENTITY_PROVIDER unset or sandbox, unless ALLOW_SANDBOX_PROVIDERS=true marks staging', () => {
    const noHttp = { ...deployment(), IDENTITY_BASE_URL: undefined, IDENTITY_API_KEY: undefined };
    for (const unset of [undefined, '']) {
      expect(problems({ ...noHttp, IDENTITY_PROVIDER: unset })).toEqual([
        'IDENTITY_PROVIDER must be set outside the local stack (http)',
      ]);
      expect(problems({ ...noHttp, IDENTITY_PROVIDER: unset, ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([
        'IDENTITY_PROVIDER must be set outside the local stack (http)',
      ]);
    }
    expect(problems({ ...noHttp, IDENTITY_PROVIDER: 'sandbox' })).toEqual([
      'IDENTITY_PROVIDER=sandbox is refused outside the local stack; use http, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    ]);
    expect(problems({ ...noHttp, IDENTITY_PROVIDER: 'sandbox', ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([]);
    // all four sandboxes together: staging only
    const sandboxes = {
      ...noHttp,
      SUMSUB_APP_TOKEN: undefined,
      SUMSUB_SECRET_KEY: undefined,
      PAYMENTS_PROVIDER: 'sandbox',
      SMS_PROVIDER: 'outbox',
      KYC_PROVIDER: 'sandbox',
      IDENTITY_PROVIDER: 'sandbox',
    };
    expect(problems(sandboxes).map((p) => p.split(' ')[0])).toEqual([
      'PAYMENTS_PROVIDER=sandbox',
      'SMS_PROVIDER=outbox',
      'KYC_PROVIDER=sandbox',
      'IDENTITY_PROVIDER=sandbox',
    ]);
    expect(problems({ ...sandboxes, ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([]);
  });

  it('refuses a Sumsub sandbox app token (sbx:) outside staging', () => {
    const sbx = `sbx:${randomBytes(24).toString('hex')}`;
    expect(problems({ ...deployment(), SUMSUB_APP_TOKEN: sbx })).toEqual([
      'SUMSUB_APP_TOKEN is a Sumsub sandbox token; use a production token, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    ]);
    expect(problems({ ...deployment(), SUMSUB_APP_TOKEN: sbx, ALLOW_SANDBOX_PROVIDERS: 'true' })).toEqual([]);
    // a production token is accepted, and on the local stack a sandbox token is too
    expect(problems(deployment())).toEqual([]);
    expect(
      parseConfig({
        ...deployment(),
        SUMSUB_APP_TOKEN: sbx,
        DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:54322/postgres',
        ESCROW_LOCAL_STACK: '1',
      }).local,
    ).toBe(true);
  });

  it('the local marker counts only with a loopback database: set in a deployment it changes nothing', () => {
    expect(problems({ ...deployment(), ESCROW_LOCAL_STACK: '1', JOBS_SECRET: LOCAL_SECRETS.JOBS_SECRET })).toHaveLength(
      1,
    );
    const local = parseConfig({
      ...deployment(),
      DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:54322/postgres',
      ESCROW_LOCAL_STACK: '1',
      ...LOCAL_SECRETS,
      PAYMENTS_PROVIDER: undefined,
      SMS_PROVIDER: undefined,
      KYC_PROVIDER: undefined,
      IDENTITY_PROVIDER: undefined,
    });
    expect(local.local).toBe(true);
    expect(local.PAYMENTS_PROVIDER).toBe('sandbox');
    expect(local.KYC_PROVIDER).toBe('sandbox');
    expect(local.IDENTITY_PROVIDER).toBe('sandbox');
    // a loopback database without the marker (someone's own Postgres) is a deployment
    expect(
      problems({
        ...deployment(),
        DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:5432/postgres',
        ...LOCAL_SECRETS,
      }).length,
    ).toBeGreaterThan(0);
  });

  it('names every problem of a start at once: a missing variable, a published secret and a sandbox provider', () => {
    const env = {
      ...deployment(),
      AUTH_JWT_SECRET: undefined,
      JOBS_SECRET: LOCAL_SECRETS.JOBS_SECRET,
      SMS_PROVIDER: 'outbox',
      TERMII_API_KEY: undefined,
    };
    const expected = [
      'AUTH_JWT_SECRET is missing',
      'JOBS_SECRET is a value published in the repository; generate a new secret',
      'SMS_PROVIDER=outbox is refused outside the local stack; use termii, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    ];
    expect(problems(env)).toEqual(expected);
    // one error, one line for each problem
    let message = '';
    try {
      parseConfig(env);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split('\n')).toEqual(['invalid configuration (3 problems):', ...expected.map((p) => `  - ${p}`)]);
    // a malformed value next to the production rules: both heard, and a variable the schema refused
    // is not named a second time by the production rules
    expect(
      problems({ ...deployment(), KYC_WEBHOOK_SECRET: 'k'.repeat(20), JOBS_SECRET: 'short', KYC_PROVIDER: 'sandbox' }),
    ).toEqual([
      'JOBS_SECRET must be at least 16 characters',
      'KYC_WEBHOOK_SECRET must be at least 32 characters outside the local stack',
      'KYC_PROVIDER=sandbox is refused outside the local stack; use sumsub, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    ]);
  });

  it('every secret value written in .env.example is on the published list', () => {
    const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const names: readonly string[] = [...SECRET_VARIABLES, ...PROVIDER_KEY_VARIABLES];
    for (const line of text.split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
      if (m && names.includes(m[1] as string) && m[2]) expect(isPublishedSecret(m[2] as string), m[1]).toBe(true);
    }
  });
});

describe('a function whose configuration is refused', () => {
  it('answers 500 with a request id and no detail; the log names the variables only', async () => {
    // this file runs in its own process: make it a deployment on published secrets
    process.env.DATABASE_URL = PROD_DB;
    delete process.env.ESCROW_LOCAL_STACK;
    const placeholder = EXAMPLE_PLACEHOLDERS[SECRET_VARIABLES.indexOf('JOBS_SECRET')] as string;
    process.env.JOBS_SECRET = placeholder;
    const logged: string[] = [];
    const original = console.error;
    console.error = (line: string) => void logged.push(String(line));
    try {
      const { default: handler } = await import('../../supabase/functions/jobs-run/handler.ts');
      const res = await handler(
        new Request('http://x/functions/v1/jobs-run', {
          method: 'POST',
          body: '{}',
          headers: { 'x-jobs-secret': placeholder },
        }),
      );
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(body).toEqual({
        success: false,
        status: 500,
        code: 'internal_error',
        error: 'Internal error',
        request_id: expect.any(String),
      });
    } finally {
      console.error = original;
    }
    const line = logged.find((l) => l.includes('config.refused'));
    expect(line).toContain('JOBS_SECRET');
    expect(line).toContain('SMS_PROVIDER');
    expect(line).not.toContain(placeholder);
  });
});
