// Operators as the service makes them (docs/operators.md): `npm run operator:grant -- <phone> <role>`
// (scripts/operator.ts) run as a child process against the test database, exactly as a person runs
// it; the eligibility it checks (KYC tier 3 and a NIN and a BVN bound to the account); and the
// second factor through the real server (admin-totp-enrol, then admin-totp-verify with a code
// computed from the enrolment's otpauth URI). Used by tests/integration/operators.test.ts and by
// every suite that needs an operator.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { expect, inject } from 'vitest';
import { hotp, totpStep } from '../../shared/operators/totp.ts';
import { post } from './api.ts';
import { testDb } from './db.ts';
import { raiseTier } from './kyc.ts';
import { signUp, type TestUser } from './users.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export type Role = 'support' | 'finance' | 'disputes' | 'admin';

/** `npm run operator:<verb> -- <args>`, as a person types it, with the given environment changes. */
export function operatorScript(
  verb: 'grant' | 'revoke',
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Run> {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, DATABASE_URL: inject('databaseUrl'), ...env })) {
    if (v !== undefined) merged[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', `operator:${verb}`, '--', ...args], {
      cwd: root,
      env: merged,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Binds a NIN and a BVN to the account as identity-verify does when a check passes (a row each in
 * private.identity_bindings, random numbers' hashes), so the account may hold an operator role.
 */
export async function bindIdentity(userId: string, kinds: ('nin' | 'bvn')[] = ['nin', 'bvn']): Promise<void> {
  for (const kind of kinds) {
    await testDb()`
      insert into private.identity_bindings (kind, id_hash, id_last4, user_id, reference)
      values (${kind}, ${randomBytes(32).toString('hex')}, '1234', ${userId}, ${`test-${
      randomBytes(6).toString('hex')
    }`})`;
  }
}

/** Makes the account eligible (tier 3, numbers bound) and grants it the roles, in SQL (the script's function). */
export async function grantRoles(user: { id: string; phone: string }, roles: Role[]): Promise<void> {
  const [row] = await testDb()<{ tier: number }[]>`select kyc_tier as tier from private.users where id = ${user.id}`;
  if ((row?.tier ?? 0) < 3) expect(await raiseTier(user.id, 3)).toBe(3);
  const [bound] = await testDb()<{ n: number }[]>`
    select count(*)::int as n from private.identity_bindings where user_id = ${user.id}`;
  if ((bound?.n ?? 0) < 2) await bindIdentity(user.id);
  for (const role of roles) await testDb()`select private.operator_grant(${user.phone}, ${role}, 'test')`;
}

/** The secret bytes of an otpauth URI. */
export function secretOf(otpauthUri: string): Uint8Array {
  const b32 = new URL(otpauthUri).searchParams.get('secret') ?? '';
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of b32) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}

/** The code of the step `offset` steps from now (0: the current one). */
export const codeAt = (secret: Uint8Array, offset = 0, ms = Date.now()): Promise<string> =>
  hotp(secret, totpStep(ms) + offset);

/** admin-totp-enrol with the user's token; the enrolment's secret. */
export async function enrol(token: string): Promise<Uint8Array> {
  const res = await post('admin-totp-enrol', undefined, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return secretOf(res.body.data.otpauth_uri);
}

/** admin-totp-verify with the code of step now + offset: a pass for this token's session. */
export async function verifyCode(token: string, secret: Uint8Array, offset = 0) {
  return await post('admin-totp-verify', { code: await codeAt(secret, offset) }, { token });
}

export interface TestOperator extends TestUser {
  secret: Uint8Array;
  roles: Role[];
}

/**
 * An operator with a second-factor pass in the session of `accessToken`: `user` (else a new tier-3
 * account) made eligible, granted `roles`, enrolled and verified through the server.
 */
export async function newOperator(
  roles: Role[] = ['disputes'],
  user?: TestUser,
): Promise<TestOperator> {
  const u = user ?? await signUp({ first_name: 'Adaeze', last_name: 'Operator', tier: 3 });
  await grantRoles(u, roles);
  const secret = await enrol(u.accessToken);
  const passed = await verifyCode(u.accessToken, secret);
  expect(passed.status, JSON.stringify(passed.body)).toBe(200);
  return { ...u, secret, roles };
}
