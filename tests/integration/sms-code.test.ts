// scripts/sms-code.ts, run as the docs run it, against the test stack's database: it prints the
// newest code for a phone only while the code can be used, says why otherwise, and refuses any
// DATABASE_URL whose host is not this machine (an operator's shell may export a deployment's).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { newPhone, signUp } from '../support/users.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script for phone with the test database's PG_PORT and no DATABASE_URL, unless env says. */
function smsCode(phone: string, env: Record<string, string> = {}): Promise<Run> {
  const pgPort = new URL(inject('databaseUrl')).port;
  return new Promise((resolve, reject) => {
    const child = spawn(`${root}node_modules/.bin/deno`, ['run', '--allow-all', 'scripts/sms-code.ts', phone], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? root, PG_PORT: pgPort, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() }));
  });
}

async function sendOtp(phone: string, context: 'signup' | 'login'): Promise<void> {
  const res = await post(authSendOtp, { phone, context });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Moves the last send to phone more than 60 s into the past, so another code may be sent. */
async function passResendGap(e164: string): Promise<void> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${e164}`}`;
}

describe('scripts/sms-code.ts', () => {
  it('prints the newest code while it is valid, and refuses it once it is proved', async () => {
    const { local, e164 } = newPhone();
    const none = await smsCode(local);
    expect(none.code, none.stderr).toBe(1);
    expect(none.stderr).toContain(`no code was sent to ${e164}`);

    await sendOtp(local, 'signup');
    const printed = await smsCode(local);
    expect(printed, printed.stderr).toMatchObject({ code: 0, stdout: await lastOtp(e164) });
    expect(printed.stdout).toMatch(/^\d{6}$/);
    expect((await smsCode(e164)).stdout, 'the +234 form of the phone').toBe(printed.stdout);

    const verified = await post(authVerify, { phone: local, context: 'signup', otp_code: printed.stdout });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    const used = await smsCode(local);
    expect(used.code).toBe(1);
    expect(used.stdout).toBe('');
    expect(used.stderr).toMatch(/the newest signup code for \+234\d{10} cannot be used any more .*auth-send-otp/);
  });

  it('refuses an expired code', async () => {
    const { local, e164 } = newPhone();
    await sendOtp(local, 'signup');
    await testDb()`update private.otps set expires_at = now() - interval '1 second' where phone = ${e164}`;
    const expired = await smsCode(local);
    expect(expired.code).toBe(1);
    expect(expired.stdout).toBe('');
    expect(expired.stderr).toMatch(/the newest signup code for \+234\d{10} expired at .*auth-send-otp/);
  });

  it('refuses a code whose SMS was withheld (a login code for a phone with no account)', async () => {
    const { local } = newPhone();
    await sendOtp(local, 'login');
    const withheld = await smsCode(local);
    expect(withheld.code).toBe(1);
    expect(withheld.stdout).toBe('');
    expect(withheld.stderr).toContain('was never sent (withheld: no_account');
  });

  it('prints a login code of an account, and nothing for a sign-up request of a phone that has one', async () => {
    const user = await signUp();
    await passResendGap(user.phone);
    await sendOtp(user.phone, 'login');
    const login = await smsCode(user.phone);
    expect(login, login.stderr).toMatchObject({ code: 0, stdout: await lastOtp(user.phone) });

    await passResendGap(user.phone);
    await sendOtp(user.phone, 'signup');
    const notice = await smsCode(user.phone);
    expect(notice.code).toBe(1);
    expect(notice.stdout).toBe('');
    expect(notice.stderr).toContain('the phone has an account already');
  });

  it('reads DATABASE_URL only when its host is this machine', async () => {
    const { local, e164 } = newPhone();
    await sendOtp(local, 'signup');
    const code = await lastOtp(e164);
    const url = new URL(inject('databaseUrl'));
    for (const host of ['127.0.0.1', 'localhost']) {
      url.hostname = host;
      const run = await smsCode(local, { DATABASE_URL: url.href, PG_PORT: '1' });
      expect(run, `${host}: ${run.stderr}`).toMatchObject({ code: 0, stdout: code });
    }
    for (
      const remote of [
        'postgres://postgres.abc:secret@aws-0-eu-west-2.pooler.supabase.com:6543/postgres',
        'postgresql://postgres:secret@db.abcdefghijkl.supabase.co:5432/postgres?sslmode=require',
        `postgres://postgres:postgres@127.0.0.1.example.com:${url.port}/postgres`,
        `postgres://postgres:postgres@127.0.0.1:${url.port},db.example.com:5432/postgres`,
        'postgres:///postgres',
      ]
    ) {
      const run = await smsCode(local, { DATABASE_URL: remote });
      expect(run.code, remote).toBe(1);
      expect(run.stdout, remote).toBe('');
      expect(run.stderr, remote).toContain("only reads the local stack's SMS outbox");
      expect(run.stderr, 'never the password').not.toContain('secret');
    }
  });
});
