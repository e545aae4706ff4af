// The server as a deployment runs it: `scripts/start.ts` with a DATABASE_URL it did not create
// (here the test database), so the production rules of docs/security.md apply. It refuses published
// secrets and sandbox providers; as a staging deployment (ALLOW_SANDBOX_PROVIDERS=true) with real
// secrets it serves, refuses a caller's `now` on jobs-run, sends OTP SMS through Termii (a local
// fake) only after answering, and spends no password hash on unverified sign-ups.
import { strong, strongSecrets } from '../support/deployment.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { SECRET_VARIABLES } from '../../shared/core/config.ts';
import { EXAMPLE_PLACEHOLDERS, LOCAL_SECRETS } from '../../shared/core/published-secrets.ts';
import { type FakeTermii, startFakeTermii } from '../fakes/termii.ts';
import type { Envelope } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { newPhone, signUp } from '../support/users.ts';
import { freePort } from '../support/ports.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Deployment {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  baseUrl: string;
}

/** Runs scripts/start.ts with exactly this environment (nothing inherited but PATH and HOME). */
function deploy(env: Record<string, string>, port: number): Deployment {
  let out = '';
  const child = spawn(`${root}node_modules/.bin/deno`, [
    'run',
    '--allow-all',
    'scripts/start.ts',
    '--quiet',
    '--no-jobs',
  ], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATABASE_URL: inject('databaseUrl'),
      PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, exited, baseUrl: `http://127.0.0.1:${port}/functions/v1` };
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs a deployment that must refuse to start: resolves with its exit code and output as soon as
 * it exits, or fails at once if it says ready (and is stopped either way, so its port is free).
 */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const d = deploy(env, await freePort());
  try {
    const code = await Promise.race([
      d.exited,
      until('ready or exit', () => (d.output().includes('ready:') ? true : undefined)).then(() => {
        throw new Error(`the deployment started instead of refusing:\n${d.output()}`);
      }),
    ]);
    return { code, out: d.output() };
  } finally {
    if (d.child.exitCode === null) {
      d.child.kill('SIGKILL');
      await d.exited;
    }
  }
}

describe('a deployment on local defaults', () => {
  it('refuses to start, naming every variable and no value: published secrets, unset providers', async () => {
    const env = {
      ...LOCAL_SECRETS, // what `npm start` fills in locally
      JOBS_SECRET: EXAMPLE_PLACEHOLDERS[SECRET_VARIABLES.indexOf('JOBS_SECRET')] as string, // .env.example's placeholder
      // a marker from the shell does not make a deployment local
      ESCROW_LOCAL_STACK: '1',
    };
    const { code, out } = await refusedStart(env);
    expect(code, out).toBe(1);
    expect(out).not.toContain('ready:');
    for (
      const name of [
        'AUTH_JWT_SECRET',
        'PAYMENTS_WEBHOOK_SECRET',
        'KYC_WEBHOOK_SECRET',
        'IDENTITY_WEBHOOK_SECRET',
        'IDENTITY_HASH_KEY',
        'PHONE_HASH_KEY',
        'JOBS_SECRET',
        'PAYMENTS_PROVIDER',
        'SMS_PROVIDER',
        'KYC_PROVIDER',
        'IDENTITY_PROVIDER',
      ]
    ) {
      expect(out).toContain(name);
    }
    for (const value of Object.values(env)) if (value.length > 1) expect(out).not.toContain(value);
  });

  it('refuses the sandbox payments, KYC and identity providers and the SMS outbox without ALLOW_SANDBOX_PROVIDERS, even with strong secrets', async () => {
    const env = {
      ...strongSecrets(),
      PAYMENTS_PROVIDER: 'sandbox',
      SMS_PROVIDER: 'outbox',
      KYC_PROVIDER: 'sandbox',
      IDENTITY_PROVIDER: 'sandbox',
    };
    const { code, out } = await refusedStart(env);
    expect(code, out).toBe(1);
    expect(out).toMatch(/PAYMENTS_PROVIDER=sandbox is refused/);
    expect(out).toMatch(/SMS_PROVIDER=outbox is refused/);
    expect(out).toMatch(/KYC_PROVIDER=sandbox is refused/);
    expect(out).toMatch(/IDENTITY_PROVIDER=sandbox is refused/);
    expect(out).not.toContain('AUTH_JWT_SECRET');
  });

  it('names a missing variable, a published secret and a sandbox provider in one start, one line each', async () => {
    const env: Record<string, string> = {
      ...strongSecrets(),
      JOBS_SECRET: LOCAL_SECRETS.JOBS_SECRET,
      PAYMENTS_PROVIDER: 'sandbox',
      SMS_PROVIDER: 'termii',
      TERMII_API_KEY: strong(),
      KYC_PROVIDER: 'sumsub',
      SUMSUB_APP_TOKEN: `prd:${strong()}`,
      SUMSUB_SECRET_KEY: strong(),
      IDENTITY_PROVIDER: 'http',
      IDENTITY_BASE_URL: 'https://identity.example.com/v1',
      IDENTITY_API_KEY: strong(),
    };
    delete env.AUTH_JWT_SECRET;
    const { code, out } = await refusedStart(env);
    expect(code, out).toBe(1);
    const problems = out.split('\n').filter((l) => l.startsWith('  - '));
    expect(out).toContain('error: invalid configuration (3 problems):');
    expect(problems).toEqual([
      '  - AUTH_JWT_SECRET is missing',
      '  - JOBS_SECRET is a value published in the repository; generate a new secret',
      '  - PAYMENTS_PROVIDER=sandbox is refused outside the local stack; use paystack, or set ALLOW_SANDBOX_PROVIDERS=true for a staging deployment',
    ]);
  });
});

describe('a staging deployment (ALLOW_SANDBOX_PROVIDERS=true, real secrets, Termii fake)', () => {
  let d: Deployment;
  let termii: FakeTermii;
  const jobsSecret = strong();

  beforeAll(async () => {
    termii = await startFakeTermii();
    d = deploy(
      {
        ...strongSecrets(),
        JOBS_SECRET: jobsSecret,
        ALLOW_SANDBOX_PROVIDERS: 'true',
        // staging runs the KYC and identity sandboxes (they answer locally)
        KYC_PROVIDER: 'sandbox',
        IDENTITY_PROVIDER: 'sandbox',
        PAYMENTS_PROVIDER: 'paystack',
        PAYSTACK_SECRET_KEY: `sk_test_${randomBytes(20).toString('hex')}`,
        PAYSTACK_BASE_URL: inject('fakePaystackUrl'),
        SMS_PROVIDER: 'termii',
        TERMII_API_KEY: `TL${randomBytes(24).toString('hex')}`,
        TERMII_BASE_URL: termii.url,
        OTP_IP_MAX_PER_HOUR: '100000',
      },
      await freePort(),
    );
    await until(
      'the staging server',
      () =>
        d.output().includes('ready:') ||
        (d.child.exitCode !== null ? Promise.reject(new Error(d.output())) : undefined),
    );
  });

  afterAll(async () => {
    if (d?.child.exitCode === null) {
      d.child.kill('SIGTERM');
      await d.exited;
    }
    await termii?.close();
  });

  const post = async <D = unknown>(name: string, body: unknown, headers: Record<string, string> = {}) => {
    // an answer that waited for a held provider would never come: give up after 10 s, clearly
    const res = await fetch(`${d.baseUrl}/${name}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: (await res.json()) as Envelope<D> };
  };

  it("jobs-run refuses a caller's now with 400 on the field; without one it runs at the current time", async () => {
    const refused = await post('jobs-run', { now: '2030-01-01T00:00:00Z' }, { 'x-jobs-secret': jobsSecret });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.details).toEqual([{ field: 'now', message: expect.stringContaining('local stack') }]);
    const ran = await post<{ now: string }>('jobs-run', {}, { 'x-jobs-secret': jobsSecret });
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    expect(Math.abs(Date.parse(ran.body.data.now) - Date.now())).toBeLessThan(60_000);
  });

  it('answers auth-send-otp before Termii is called back; the code reaches Termii afterwards; no SMS for a phone without an account', async () => {
    const user = await signUp(); // through the local stack: same database
    // its sign-up code was just sent: let a minute pass for the resend gap
    await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds' where key = ${`otp:resend:${user.phone}`}`;
    const stranger = newPhone().e164;
    termii.hold();
    const before = termii.received.length;
    // Termii holds every answer: had the server waited for it, these answers would not come
    const [a, b] = [
      await post('auth-send-otp', { phone: stranger, context: 'login' }),
      await post('auth-send-otp', { phone: user.phone, context: 'login' }),
    ];
    expect(a).toEqual(b);
    expect(a.status).toBe(200);
    // the provider is called after the answer: the message arrives, and still waits for Termii's reply
    await until(
      'the code at Termii',
      () => termii.received.slice(before).find((m) => m.body.to === user.phone.slice(1)),
    );
    expect(termii.held()).toBe(1);
    termii.release();
    await until('the row marked sent', async () => {
      const [row] = await testDb()<{ sent: boolean }[]>`
        select sent_at is not null as sent from private.sms_outbox where phone = ${user.phone} order by id desc limit 1`;
      return row?.sent || undefined;
    });
    expect(termii.received.slice(before).map((m) => m.body.to)).toEqual([user.phone.slice(1)]);
    const [withheld] = await testDb()<{ withheld: string | null; sent: boolean }[]>`
      select withheld, sent_at is not null as sent from private.sms_outbox where phone = ${stranger}`;
    expect(withheld).toEqual({ withheld: 'no_account', sent: false });
  });

  it('96 sign-ups for unverified phones, 48 at once: all 409 phone_not_verified, and the server spends far less CPU than one password hash each', async () => {
    // what one hash costs on this machine (PBKDF2-SHA256, 600,000 iterations, as the server does)
    const t = process.cpuUsage();
    pbkdf2Sync('a sound passphrase', randomBytes(16), 600_000, 32, 'sha256');
    const used = process.cpuUsage(t);
    const hashSeconds = (used.user + used.system) / 1e6;

    const cpu = () => {
      const fields = readFileSync(`/proc/${d.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    };
    const before = cpu();
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 48 }, async () => {
        while (next < 96) {
          next++;
          const r = await post('auth-signup', {
            phone: newPhone().e164,
            first_name: 'Ada',
            last_name: 'Obi',
            password: 'a sound passphrase',
          });
          statuses.push(r.status);
          if (r.status === 409) {
            expect(r.body.code).toBe('phone_not_verified');
            expect(r.body.details).toEqual([{
              field: 'phone',
              message: expect.stringContaining('has not been verified'),
            }]);
          }
        }
      }),
    );
    const spent = cpu() - before;
    expect(statuses.filter((s) => s === 409).length).toBe(96);
    // hashing each request would cost 96 x hashSeconds; a quarter of that is far above the
    // validation and one query each that the requests cost now
    expect(spent, `server CPU ${spent}s for 96 sign-ups; one hash ${hashSeconds}s`).toBeLessThan(
      96 * hashSeconds * 0.25,
    );
  });
});
