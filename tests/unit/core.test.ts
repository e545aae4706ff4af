// The core helpers under Node: validation (phones, query integers, zod details), password
// hashing, access tokens, OTP generation and configuration parsing.
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateOtp } from '../../shared/auth/otp.ts';
import { hashPassword, verifyPassword } from '../../shared/auth/password.ts';
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken, verifyAccessToken } from '../../shared/auth/tokens.ts';
import { ConfigError, getConfig, parseConfig } from '../../shared/core/config.ts';
import {
  NIGERIAN_PHONE,
  phoneSchema,
  queryBool,
  queryInt,
  text,
  toE164,
  zodDetails,
} from '../../shared/core/validation.ts';
import { TEST_JWT_SECRET } from '../support/stack.ts';

// ---- helpers -------------------------------------------------------------------------------

const USER = { id: '0b6f3f5e-3a2b-4c1d-9e8f-7a6b5c4d3e2f', phone: '+2348031234567' };
const SESSION = '5d1c2b3a-4f5e-4a7b-8c9d-0e1f2a3b4c5d';
const enc = new TextEncoder();

/** Signs a token with full control over claims and key, for the negative cases. */
async function forge(
  claims: Record<string, unknown>,
  opts: { secret?: string; exp?: number | string; iss?: string; aud?: string; sub?: string | null; iat?: number } = {},
): Promise<string> {
  let jwt = new SignJWT({ role: 'authenticated', session_id: SESSION, phone: USER.phone, ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(opts.aud ?? 'authenticated')
    .setIssuer(opts.iss ?? getConfig().AUTH_JWT_ISSUER)
    .setIssuedAt(opts.iat)
    .setExpirationTime(opts.exp ?? '1h');
  if (opts.sub !== null) jwt = jwt.setSubject(opts.sub ?? USER.id);
  return jwt.sign(enc.encode(opts.secret ?? TEST_JWT_SECRET));
}

const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** A complete, valid environment for parseConfig; secrets are distinctive so leaks are visible. */
const SECRETS = {
  AUTH_JWT_SECRET: 'jwt-SECRET-value-0123456789-abcdefghijkl',
  PAYMENTS_WEBHOOK_SECRET: 'payments-SECRET-value-987654',
  KYC_WEBHOOK_SECRET: 'kyc-SECRET-value-1122334455',
  IDENTITY_WEBHOOK_SECRET: 'identity-SECRET-value-66778899',
  IDENTITY_HASH_KEY: 'identity-hash-SECRET-value-0011223344',
  PHONE_HASH_KEY: 'phone-hash-SECRET-value-5566778899',
  JOBS_SECRET: 'jobs-SECRET-value-4455667788',
  PAYSTACK_SECRET_KEY: 'sk_live_SECRET_value_abcdef',
  TERMII_API_KEY: 'termii-SECRET-value-zyxwvu',
};
const DB_URL = 'postgres://postgres:db-PASSWORD-value@127.0.0.1:5432/postgres';
// the local stack's marker (with the loopback database above): the production rules have their
// own suite, tests/unit/production-config.clock.test.ts
const validEnv = (): Record<string, string | undefined> => ({
  DATABASE_URL: DB_URL,
  ESCROW_LOCAL_STACK: '1',
  ...SECRETS,
});

function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('parseConfig accepted an invalid environment');
}

/**
 * A ConfigError must never repeat a secret it was given (secrets, keys, passwords in URLs).
 * `extra` names further variables of env whose values count as secret for the case at hand.
 */
function expectNoValues(err: ConfigError, env: Record<string, string | undefined>, extra: string[] = []) {
  const text = `${err.message}\n${err.problems.join('\n')}\n${String(err.stack)}`;
  for (const name of [...Object.keys(SECRETS), 'DATABASE_URL', ...extra]) {
    const value = env[name];
    if (value) expect(text, `value of ${name} leaked`).not.toContain(value);
  }
  for (const value of Object.values(SECRETS)) expect(text).not.toContain(value);
  expect(text).not.toContain('db-PASSWORD-value');
}

// ---- validation ----------------------------------------------------------------------------

describe('validation: phones', () => {
  it('accepts +234 and 0 forms and returns E.164', () => {
    expect(phoneSchema.parse('08031234567')).toBe('+2348031234567');
    expect(phoneSchema.parse('+2348031234567')).toBe('+2348031234567');
    expect(phoneSchema.parse('09012345678')).toBe('+2349012345678');
    expect(toE164('07011112222')).toBe('+2347011112222');
    expect(toE164('+2347011112222')).toBe('+2347011112222');
  });

  it('refuses every other shape', () => {
    for (
      const bad of [
        '2348031234567', // no plus
        '+23408031234567', // +234 then 11 digits
        '+234803123456', // +234 then 9 digits
        '+23480312345678', // +234 then 11 digits
        '0803123456', // 0 then 9 digits
        '080312345678', // 0 then 11 digits
        '8031234567', // bare 10 digits
        ' 08031234567',
        '08031234567 ',
        '0803 123 4567',
        '0803-123-4567',
        '+1 2025550123',
        '+2348031234567\n',
        '０８０３１２３４５６７', // full-width digits
        '',
      ]
    ) {
      expect(phoneSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
      expect(NIGERIAN_PHONE.test(bad), JSON.stringify(bad)).toBe(false);
    }
    expect(phoneSchema.safeParse(8031234567).success).toBe(false);
  });
});

describe('validation: queryInt and queryBool', () => {
  const limit = queryInt(20, 1, 50);

  it('defaults when absent and accepts both bounds', () => {
    expect(limit.parse(undefined)).toBe(20);
    expect(limit.parse('1')).toBe(1);
    expect(limit.parse('50')).toBe(50);
    expect(limit.parse('25')).toBe(25);
  });

  it('refuses values just outside the bounds and non-integers', () => {
    for (const bad of ['0', '51', '-1', '1.5', '1e2', 'abc', '', ' 5', '5 ', '0x10', '+5', '99999999999999999999']) {
      expect(limit.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    const r = limit.safeParse('51');
    expect(r.success).toBe(false);
    if (!r.success) expect(zodDetails(r.error, 'query')[0]?.message).toBe('must be at most 50');
    const r0 = limit.safeParse('0');
    if (!r0.success) expect(zodDetails(r0.error, 'query')[0]?.message).toBe('must be at least 1');
    else throw new Error('0 accepted');
  });

  it('queryBool takes true/false only', () => {
    const b = queryBool(false);
    expect(b.parse(undefined)).toBe(false);
    expect(b.parse('true')).toBe(true);
    expect(b.parse('false')).toBe(false);
    for (const bad of ['1', 'yes', 'TRUE', '']) expect(b.safeParse(bad).success, bad).toBe(false);
  });
});

describe('validation: zodDetails', () => {
  const schema = z.strictObject({
    name: text(1, 5),
    kind: z.enum(['a', 'b']),
    inner: z.strictObject({ deep: z.strictObject({ n: z.number() }) }),
    list: z.array(z.strictObject({ v: z.string() })),
  });

  it('one {field, message} per problem, dotted paths, unknown keys named one by one', () => {
    const r = schema.safeParse({
      name: 'toolong',
      kind: 'c',
      inner: { deep: { n: 'x', extra: 1 }, more: 2 },
      list: [{ v: 'ok' }, { v: 3 }],
      stray: true,
      other: null,
    });
    expect(r.success).toBe(false);
    if (r.success) return;
    const details = zodDetails(r.error);
    for (const d of details) expect(Object.keys(d).sort()).toEqual(['field', 'message']);
    expect(details.map((d) => d.field).sort()).toEqual(
      ['inner.deep.extra', 'inner.deep.n', 'inner.more', 'kind', 'list.1.v', 'name', 'other', 'stray'].sort(),
    );
    const by = Object.fromEntries(details.map((d) => [d.field, d.message]));
    expect(by.name).toBe('must be at most 5 characters');
    expect(by.kind).toBe('must be one of: a, b');
    expect(by['inner.deep.n']).toBe('must be a number');
    expect(by['list.1.v']).toBe('must be a string');
    expect(by.stray).toBe('is not an accepted field');
  });

  it('a missing field "is required"; a null one names the type', () => {
    const r = z.strictObject({ a: z.string(), b: z.string() }).safeParse({ b: null });
    expect(r.success).toBe(false);
    if (r.success) return;
    const by = Object.fromEntries(zodDetails(r.error).map((d) => [d.field, d.message]));
    expect(by).toEqual({ a: 'is required', b: 'must be a string' });
    const types = z.strictObject({ n: z.number().int(), list: z.array(z.string()), flag: z.boolean() }).safeParse({
      n: 'x',
      list: {},
      flag: 1,
    });
    if (types.success) throw new Error('accepted');
    expect(Object.fromEntries(zodDetails(types.error).map((d) => [d.field, d.message]))).toEqual({
      n: 'must be a number',
      list: 'must be an array',
      flag: 'must be a boolean',
    });
    const int = z.strictObject({ n: z.number().int() }).safeParse({ n: 1.5 });
    if (int.success) throw new Error('accepted');
    expect(zodDetails(int.error)).toEqual([{ field: 'n', message: 'must be an integer' }]);
  });

  it('root-level problems are named by the root given (body by default, query for queries)', () => {
    const r = z.strictObject({ a: z.string() }).safeParse([]);
    expect(r.success).toBe(false);
    if (r.success) return;
    expect(zodDetails(r.error)).toEqual([{ field: 'body', message: 'must be an object' }]);
    expect(zodDetails(r.error, 'query').map((d) => d.field)).toEqual(['query']);
  });

  it('text() trims before measuring and refuses blank', () => {
    const t = text(1, 3);
    expect(t.parse('  ab  ')).toBe('ab');
    expect(t.safeParse('   ').success).toBe(false);
    expect(t.safeParse('abcd').success).toBe(false);
  });
});

// ---- passwords -----------------------------------------------------------------------------

describe('password hashing (PBKDF2-SHA256)', () => {
  it('produces a self-describing hash with 600,000 iterations, a 16-byte salt and a 32-byte key', async () => {
    const hash = await hashPassword('correct horse battery staple', 600_000);
    expect(hash).toMatch(/^pbkdf2-sha256\$600000\$[A-Za-z0-9+/]+={0,2}\$[A-Za-z0-9+/]+={0,2}$/);
    const [, , salt, key] = hash.split('$');
    expect(Buffer.from(salt as string, 'base64')).toHaveLength(16);
    expect(Buffer.from(key as string, 'base64')).toHaveLength(32);
    expect(hash).not.toContain('correct horse');
  });

  it('verifies the right password and refuses wrong ones', async () => {
    const hash = await hashPassword('correct horse battery staple', 600_000);
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', hash)).toBe(false);
    expect(await verifyPassword('Correct horse battery staple', hash)).toBe(false);
    expect(await verifyPassword('correct horse battery staple ', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('two hashes of the same password differ (random salt), and both verify', async () => {
    const [a, b] = await Promise.all([hashPassword('same password', 600_000), hashPassword('same password', 600_000)]);
    expect(a).not.toBe(b);
    expect(a.split('$')[2]).not.toBe(b.split('$')[2]);
    expect(await verifyPassword('same password', a)).toBe(true);
    expect(await verifyPassword('same password', b)).toBe(true);
  });

  it('the work factor is read from the stored hash, so older hashes keep verifying', async () => {
    const cheap = await hashPassword('pw with fewer rounds', 1000);
    expect(cheap.startsWith('pbkdf2-sha256$1000$')).toBe(true);
    expect(await verifyPassword('pw with fewer rounds', cheap)).toBe(true);
    // changing the iteration count in the string changes the derived key
    expect(await verifyPassword('pw with fewer rounds', cheap.replace('$1000$', '$1001$'))).toBe(false);
  });

  it('malformed or foreign stored hashes never verify', async () => {
    const good = await hashPassword('pw', 1000);
    const [, , salt, key] = good.split('$');
    for (
      const stored of [
        '',
        'plaintext',
        `bcrypt$1000$${salt}$${key}`,
        `pbkdf2-sha256$abc$${salt}$${key}`,
        `pbkdf2-sha256$1000$$${key}`,
        `pbkdf2-sha256$1000$${salt}$`,
        `pbkdf2-sha256$1000$${salt}$${Buffer.alloc(16).toString('base64')}`,
      ]
    ) {
      expect(await verifyPassword('pw', stored), stored).toBe(false);
    }
  });
});

// ---- access tokens -------------------------------------------------------------------------

describe('access tokens (JWT HS256)', () => {
  it('sign/verify round trip carries the claims the design names', async () => {
    const token = await signAccessToken(USER, SESSION);
    const [header] = token.split('.');
    expect(JSON.parse(Buffer.from(header as string, 'base64url').toString())).toMatchObject({ alg: 'HS256' });
    const claims = await verifyAccessToken(token);
    expect(claims).not.toBeNull();
    expect(claims).toMatchObject({
      sub: USER.id,
      role: 'authenticated',
      aud: 'authenticated',
      iss: getConfig().AUTH_JWT_ISSUER,
      session_id: SESSION,
      phone: USER.phone,
    });
    expect(claims!.exp - claims!.iat).toBe(ACCESS_TOKEN_TTL_SECONDS);
    expect(ACCESS_TOKEN_TTL_SECONDS).toBe(3600);
    expect(Math.abs(claims!.iat - Date.now() / 1000)).toBeLessThan(60);
  });

  it('a token forged the same way as the real one verifies (the negative cases below are meaningful)', async () => {
    expect(await verifyAccessToken(await forge({}))).not.toBeNull();
  });

  it('tampered tokens are refused', async () => {
    const token = await signAccessToken(USER, SESSION);
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const otherUser = b64url(JSON.stringify({ ...payload, sub: '11111111-2222-4333-8444-555555555555' }));
    expect(await verifyAccessToken(`${h}.${otherUser}.${s}`)).toBeNull();
    const longer = b64url(JSON.stringify({ ...payload, exp: payload.exp + 86400 }));
    expect(await verifyAccessToken(`${h}.${longer}.${s}`)).toBeNull();
    const flipped = s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.at(-1);
    expect(await verifyAccessToken(`${h}.${p}.${flipped}`)).toBeNull();
    expect(await verifyAccessToken(`${h}.${p}.`)).toBeNull();
    expect(await verifyAccessToken(`${h}.${p}`)).toBeNull();
    expect(await verifyAccessToken('')).toBeNull();
    expect(await verifyAccessToken('garbage')).toBeNull();
  });

  it('alg none and other algorithms are refused', async () => {
    const token = await signAccessToken(USER, SESSION);
    const [, p] = token.split('.') as [string, string];
    const none = b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    expect(await verifyAccessToken(`${none}.${p}.`)).toBeNull();
    const hs512 = await new SignJWT({ role: 'authenticated', session_id: SESSION, phone: USER.phone })
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject(USER.id)
      .setAudience('authenticated')
      .setIssuer(getConfig().AUTH_JWT_ISSUER)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(enc.encode(TEST_JWT_SECRET));
    expect(await verifyAccessToken(hs512)).toBeNull();
  });

  it('expired tokens are refused', async () => {
    const past = Math.floor(Date.now() / 1000) - 7200;
    expect(await verifyAccessToken(await forge({}, { iat: past, exp: past + 3600 }))).toBeNull();
    expect(await verifyAccessToken(await forge({}, { exp: Math.floor(Date.now() / 1000) - 120 }))).toBeNull();
  });

  it('tokens signed with another secret are refused', async () => {
    expect(await verifyAccessToken(await forge({}, { secret: 'another-secret-0123456789-abcdefghijklmnop' })))
      .toBeNull();
    expect(await verifyAccessToken(await forge({}, { secret: `${TEST_JWT_SECRET}x` }))).toBeNull();
  });

  it('wrong issuer, audience, role or missing claims are refused', async () => {
    expect(await verifyAccessToken(await forge({}, { iss: 'someone-else' }))).toBeNull();
    expect(await verifyAccessToken(await forge({}, { aud: 'anon' }))).toBeNull();
    expect(await verifyAccessToken(await forge({ role: 'service_role' }))).toBeNull();
    expect(await verifyAccessToken(await forge({ role: 'anon' }))).toBeNull();
    expect(await verifyAccessToken(await forge({ session_id: undefined }))).toBeNull();
    expect(await verifyAccessToken(await forge({ session_id: 'not-a-uuid' }))).toBeNull();
    expect(await verifyAccessToken(await forge({ phone: undefined }))).toBeNull();
    expect(await verifyAccessToken(await forge({}, { sub: null }))).toBeNull();
    expect(await verifyAccessToken(await forge({}, { sub: 'admin' }))).toBeNull();
  });
});

// ---- OTP -----------------------------------------------------------------------------------

describe('generateOtp', () => {
  it('always 6 digits, first digit roughly uniform over 20,000 draws', () => {
    const draws = 20_000;
    const firstDigit = new Array<number>(10).fill(0);
    const seen = new Set<string>();
    for (let i = 0; i < draws; i++) {
      const code = generateOtp();
      expect(code).toMatch(/^[0-9]{6}$/);
      firstDigit[Number(code[0])]! += 1;
      seen.add(code);
    }
    // every first digit, 0 included (codes are zero-padded, not 100000-999999)
    const expected = draws / 10;
    for (const [digit, n] of firstDigit.entries()) {
      expect(n, `first digit ${digit}`).toBeGreaterThan(expected * 0.8);
      expect(n, `first digit ${digit}`).toBeLessThan(expected * 1.2);
    }
    // chi-square with 9 degrees of freedom: p < 1e-6 above ~46
    const chi2 = firstDigit.reduce((acc, n) => acc + (n - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(46);
    // 20,000 draws from a million codes: a few hundred collisions at most
    expect(seen.size).toBeGreaterThan(19_000);
  });

  it('last digit is roughly uniform too', () => {
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 20_000; i++) counts[Number(generateOtp()[5])]! += 1;
    const chi2 = counts.reduce((acc, n) => acc + (n - 2000) ** 2 / 2000, 0);
    expect(chi2).toBeLessThan(46);
  });
});

// ---- configuration -------------------------------------------------------------------------

describe('parseConfig', () => {
  it('accepts a complete environment and applies defaults', () => {
    const c = parseConfig(validEnv());
    expect(c.databaseUrl).toBe(DB_URL);
    expect(c.SMS_PROVIDER).toBe('outbox');
    expect(c.PAYMENTS_PROVIDER).toBe('sandbox');
    expect(c.PASSWORD_PBKDF2_ITERATIONS).toBe(600_000);
    expect(c.OTP_TTL_SECONDS).toBe(600);
    expect(c.OTP_RESEND_SECONDS).toBe(60);
    expect(c.OTP_MAX_PER_HOUR).toBe(5);
    expect(c.OTP_MAX_ATTEMPTS).toBe(5);
    expect(c.local).toBe(true);
    const viaSupabase = parseConfig({
      ...validEnv(),
      DATABASE_URL: undefined,
      SUPABASE_DB_URL: 'postgres://x@127.0.0.1/db',
    });
    expect(viaSupabase.databaseUrl).toBe('postgres://x@127.0.0.1/db');
  });

  it('a missing AUTH_JWT_SECRET throws ConfigError naming it, without any provided secret value', () => {
    const env = { ...validEnv(), AUTH_JWT_SECRET: undefined };
    const err = configError(env);
    expect(err.name).toBe('ConfigError');
    expect(err.message).toContain('AUTH_JWT_SECRET');
    expect(err.problems.some((p) => p.startsWith('AUTH_JWT_SECRET'))).toBe(true);
    expectNoValues(err, validEnv());
    // an empty value counts as missing
    const empty = configError({ ...validEnv(), AUTH_JWT_SECRET: '' });
    expect(empty.message).toContain('AUTH_JWT_SECRET');
  });

  it('a too-short AUTH_JWT_SECRET is named and its value is not repeated', () => {
    const env = { ...validEnv(), AUTH_JWT_SECRET: 'short-but-secret' };
    const err = configError(env);
    expect(err.message).toContain('AUTH_JWT_SECRET');
    expectNoValues(err, env);
    expect(err.message).not.toContain('short-but-secret');
  });

  it('SMS_PROVIDER=termii without TERMII_API_KEY names TERMII_API_KEY', () => {
    const env = { ...validEnv(), SMS_PROVIDER: 'termii', TERMII_API_KEY: undefined };
    const err = configError(env);
    expect(err.message).toContain('TERMII_API_KEY');
    expectNoValues(err, env);
    expect(parseConfig({ ...validEnv(), SMS_PROVIDER: 'termii' }).SMS_PROVIDER).toBe('termii');
  });

  it('PAYMENTS_PROVIDER=paystack without PAYSTACK_SECRET_KEY names PAYSTACK_SECRET_KEY', () => {
    const err = configError({ ...validEnv(), PAYMENTS_PROVIDER: 'paystack', PAYSTACK_SECRET_KEY: undefined });
    expect(err.message).toContain('PAYSTACK_SECRET_KEY');
  });

  it('KYC_PROVIDER=sumsub without its keys names SUMSUB_APP_TOKEN and SUMSUB_SECRET_KEY', () => {
    const env = { ...validEnv(), KYC_PROVIDER: 'sumsub' };
    const err = configError(env);
    expect(err.problems).toEqual([
      'SUMSUB_APP_TOKEN required when KYC_PROVIDER=sumsub',
      'SUMSUB_SECRET_KEY required when KYC_PROVIDER=sumsub',
    ]);
    const keys = { SUMSUB_APP_TOKEN: 'sumsub-SECRET-app-token-1234', SUMSUB_SECRET_KEY: 'sumsub-SECRET-key-5678' };
    const one = configError({ ...env, SUMSUB_APP_TOKEN: keys.SUMSUB_APP_TOKEN });
    expect(one.problems).toEqual(['SUMSUB_SECRET_KEY required when KYC_PROVIDER=sumsub']);
    expectNoValues(one, { ...env, ...keys }, ['SUMSUB_APP_TOKEN']);
    expect(parseConfig({ ...env, ...keys }).KYC_PROVIDER).toBe('sumsub');
    expect(parseConfig(validEnv()).KYC_PROVIDER).toBe('sandbox');
  });

  it('IDENTITY_PROVIDER=http without its address and key names IDENTITY_BASE_URL and IDENTITY_API_KEY', () => {
    const env = { ...validEnv(), IDENTITY_PROVIDER: 'http' };
    expect(configError(env).problems).toEqual([
      'IDENTITY_BASE_URL required when IDENTITY_PROVIDER=http',
      'IDENTITY_API_KEY required when IDENTITY_PROVIDER=http',
    ]);
    const withKey = { ...env, IDENTITY_API_KEY: 'identity-SECRET-api-key-4321' };
    const err = configError(withKey);
    expect(err.problems).toEqual(['IDENTITY_BASE_URL required when IDENTITY_PROVIDER=http']);
    expectNoValues(err, withKey, ['IDENTITY_API_KEY']);
    expect(parseConfig({ ...withKey, IDENTITY_BASE_URL: 'https://identity.example.com' }).IDENTITY_PROVIDER).toBe(
      'http',
    );
    expect(parseConfig(validEnv()).IDENTITY_PROVIDER).toBe('sandbox');
  });

  it('a missing or short IDENTITY_HASH_KEY is named like the other secrets, never shown', () => {
    expect(configError({ ...validEnv(), IDENTITY_HASH_KEY: undefined }).problems).toEqual([
      'IDENTITY_HASH_KEY is missing',
    ]);
    const env = { ...validEnv(), IDENTITY_HASH_KEY: 'short-hash-key' };
    const err = configError(env);
    expect(err.problems).toEqual(['IDENTITY_HASH_KEY must be at least 16 characters']);
    expectNoValues(err, env, ['IDENTITY_HASH_KEY']);
  });

  it('no database URL at all names DATABASE_URL', () => {
    const err = configError({ ...validEnv(), DATABASE_URL: undefined });
    expect(err.message).toContain('DATABASE_URL');
    expectNoValues(err, validEnv());
  });

  it('names every bad webhook secret and never shows a value', () => {
    const env = {
      ...validEnv(),
      PAYMENTS_WEBHOOK_SECRET: undefined,
      KYC_WEBHOOK_SECRET: 'tooshort-kyc',
      SMS_PROVIDER: 'carrier-pigeon',
    };
    const err = configError(env);
    for (const name of ['PAYMENTS_WEBHOOK_SECRET', 'KYC_WEBHOOK_SECRET', 'SMS_PROVIDER']) {
      expect(err.message).toContain(name);
    }
    expect(err.message).not.toContain('IDENTITY_WEBHOOK_SECRET');
    expectNoValues(err, env, ['SMS_PROVIDER']);
    expect(err.message).not.toContain('carrier-pigeon');
  });

  it('refuses fewer than 600,000 PBKDF2 iterations', () => {
    const err = configError({ ...validEnv(), PASSWORD_PBKDF2_ITERATIONS: '100000' });
    expect(err.message).toContain('PASSWORD_PBKDF2_ITERATIONS');
    expect(parseConfig({ ...validEnv(), PASSWORD_PBKDF2_ITERATIONS: '700000' }).PASSWORD_PBKDF2_ITERATIONS).toBe(
      700_000,
    );
  });

  it('the running test configuration is the one the support files set', () => {
    expect(getConfig().AUTH_JWT_SECRET).toBe(TEST_JWT_SECRET);
  });
});
