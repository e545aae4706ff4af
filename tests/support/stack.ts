// Starts the real local stack (embedded Postgres + the Deno functions server) for the tests,
// exactly as `npm start` does, on test ports with a fresh data folder.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TEST_SECRETS } from '../../shared/core/published-secrets.ts';

export const TEST_JWT_SECRET: string = TEST_SECRETS.AUTH_JWT_SECRET;
export const TEST_PAYMENTS_WEBHOOK_SECRET: string = TEST_SECRETS.PAYMENTS_WEBHOOK_SECRET;
export const TEST_KYC_WEBHOOK_SECRET: string = TEST_SECRETS.KYC_WEBHOOK_SECRET;
export const TEST_IDENTITY_WEBHOOK_SECRET: string = TEST_SECRETS.IDENTITY_WEBHOOK_SECRET;
export const TEST_PAYSTACK_SECRET_KEY: string = TEST_SECRETS.PAYSTACK_SECRET_KEY;
export const TEST_JOBS_SECRET: string = TEST_SECRETS.JOBS_SECRET;
export const TEST_SUMSUB_APP_TOKEN: string = TEST_SECRETS.SUMSUB_APP_TOKEN;
export const TEST_SUMSUB_SECRET_KEY: string = TEST_SECRETS.SUMSUB_SECRET_KEY;
export const TEST_IDENTITY_API_KEY: string = TEST_SECRETS.IDENTITY_API_KEY;

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface Stack {
  baseUrl: string;
  databaseUrl: string;
  fakePaystackUrl: string;
  /** The KYC fake (tests/fakes/kyc.ts): Sumsub at its root, the identity contract under /identity. */
  fakeKycUrl: string;
  logFile: string;
  /** The Deno process serving the functions (CPU readings in benchmarks). */
  serverPid: number;
  stop(): Promise<void>;
}

export function testStackEnv(httpPort: number, pgPort: number): Record<string, string> {
  return {
    PORT: String(httpPort),
    PG_PORT: String(pgPort),
    ESCROW_DATA_DIR: `${root}.data/test-postgres-${pgPort}`,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    PAYMENTS_WEBHOOK_SECRET: TEST_PAYMENTS_WEBHOOK_SECRET,
    KYC_WEBHOOK_SECRET: TEST_KYC_WEBHOOK_SECRET,
    IDENTITY_WEBHOOK_SECRET: TEST_IDENTITY_WEBHOOK_SECRET,
    IDENTITY_HASH_KEY: TEST_SECRETS.IDENTITY_HASH_KEY,
    PHONE_HASH_KEY: TEST_SECRETS.PHONE_HASH_KEY,
    JOBS_SECRET: TEST_JOBS_SECRET,
    WEBHOOK_SECRET_KEY: TEST_SECRETS.WEBHOOK_SECRET_KEY,
    TOTP_ENCRYPTION_KEY: TEST_SECRETS.TOTP_ENCRYPTION_KEY,
    SMS_PROVIDER: 'outbox',
    // every test runs from 127.0.0.1: the per-address limit is raised, the per-phone ones are not
    OTP_IP_MAX_PER_HOUR: '100000',
    // the real Paystack adapter, pointed at the local fake (tests/fakes/paystack.ts)
    PAYMENTS_PROVIDER: 'paystack',
    PAYSTACK_SECRET_KEY: TEST_PAYSTACK_SECRET_KEY,
    PAYSTACK_BASE_URL: `http://127.0.0.1:${httpPort + 2}`,
    // the real Sumsub and http identity adapters, pointed at the KYC fake (tests/fakes/kyc.ts)
    KYC_PROVIDER: 'sumsub',
    SUMSUB_APP_TOKEN: TEST_SUMSUB_APP_TOKEN,
    SUMSUB_SECRET_KEY: TEST_SUMSUB_SECRET_KEY,
    SUMSUB_BASE_URL: `http://127.0.0.1:${httpPort + 3}`,
    IDENTITY_PROVIDER: 'http',
    IDENTITY_API_KEY: TEST_IDENTITY_API_KEY,
    IDENTITY_BASE_URL: `http://127.0.0.1:${httpPort + 3}/identity`,
    // a request body must arrive within 5 s (30 by default), so that the slow-body test is quick;
    // every other test sends its body at once
    HTTP_BODY_TIMEOUT_MS: '5000',
    // live streams check their session every 2 s and end after 10 s (15 and 120 by default), so
    // that a logout's end and a stream's end are seen within a test
    STREAM_HEARTBEAT_SECONDS: '2',
    STREAM_MAX_SECONDS: '10',
    // webhooks go out when a suite runs the job, never on their own (the job moves time here):
    // tests/integration/events-npm-start.test.ts sends one right after a write, on a stack of its own
    WEBHOOK_SEND_AFTER_WRITES: 'false',
  };
}

/**
 * The environment `npm start` has in a fresh shell: nothing of the test stack's configuration
 * (tests/support/env.ts sets it in this process), so every provider and secret takes its local
 * default; its own ports and data folder.
 */
export function npmStartEnv(httpPort: number, pgPort: number, dataDir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? root,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PORT: String(httpPort),
    PG_PORT: String(pgPort),
    ESCROW_DATA_DIR: dataDir,
  };
}

/** Starts one provider fake under Deno; resolves when it prints `listening`. */
function startFake(
  label: string,
  script: string,
  env: Record<string, string>,
  out: NodeJS.WritableStream,
  logFile: string,
): Promise<ChildProcess> {
  const fake: ChildProcess = spawn(`${root}node_modules/.bin/deno`, ['run', '--allow-net', '--allow-env', script], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  fake.stderr?.pipe(out);
  return new Promise<ChildProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      fake.kill('SIGTERM');
      reject(new Error(`fake ${label} did not start; see ${logFile}`));
    }, 60_000);
    fake.stdout?.on('data', (chunk: Buffer) => {
      out.write(chunk);
      if (chunk.toString().includes('listening')) {
        clearTimeout(timer);
        fake.removeAllListeners('exit');
        resolve(fake);
      }
    });
    fake.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fake ${label} exited with code ${code}; see ${logFile}`));
    });
  });
}

/** The functions server that startServer started. */
export interface Server {
  child: ChildProcess;
  pid: number;
  /** SIGTERM, then SIGKILL after 15 s; resolves when it has exited (at once if it had). */
  stop(): Promise<void>;
}

export interface ServerOptions {
  /** The whole environment of the server (nothing is inherited). */
  env: Record<string, string>;
  /** Where its output goes: stderr is piped there, and stdout written there as it comes. */
  out: NodeJS.WritableStream;
  /** How long it may take to print `ready:`. */
  timeoutMs: number;
  /** The error when it does not start; why is `did not start in N s` or `exited with code N`. */
  failure(why: string): Error;
}

/**
 * Starts the local stack as `npm start` does (scripts/start.ts) with --fresh --quiet --no-jobs, in
 * the repository's folder, and resolves when it prints `ready:`. The arguments are fixed: --no-jobs
 * keeps every caller from starting a server that runs the job by itself (tests/unit/clock-group.test.ts);
 * a suite moves time only by calling the job.
 */
export async function startServer(options: ServerOptions): Promise<Server> {
  const { env, out, timeoutMs, failure } = options;
  const child: ChildProcess = spawn(`${root}node_modules/.bin/deno`, [
    'run',
    '--allow-all',
    'scripts/start.ts',
    '--fresh',
    '--quiet',
    '--no-jobs',
  ], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.pipe(out);
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    let ready = false;
    const timer = setTimeout(() => reject(failure(`did not start in ${timeoutMs / 1000} s`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out.write(chunk);
      if (ready) return;
      seen += chunk.toString();
      if (seen.includes('ready:')) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(failure(`exited with code ${code}`));
    });
  });
  child.removeAllListeners('exit');
  return {
    child,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}

/** Ports: TEST_HTTP_PORT / TEST_PG_PORT (54331 / 54332), so several runs can share a machine. */
export async function startStack(
  httpPort = Number(process.env.TEST_HTTP_PORT || 54331),
  pgPort = Number(process.env.TEST_PG_PORT || 54332),
): Promise<Stack> {
  mkdirSync(`${root}.data`, { recursive: true });
  const logFile = `${root}.data/test-server-${httpPort}.log`;
  const out = createWriteStream(logFile);
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...testStackEnv(httpPort, pgPort) };
  delete env.DATABASE_URL;
  const fakePort = httpPort + 2;
  const kycPort = httpPort + 3;
  const functions = `http://127.0.0.1:${httpPort}/functions/v1`;
  const fakes = await Promise.allSettled([
    startFake(
      'Paystack',
      'tests/fakes/paystack.ts',
      {
        ...env,
        FAKE_PAYSTACK_PORT: String(fakePort),
        FAKE_PAYSTACK_SECRET_KEY: TEST_PAYSTACK_SECRET_KEY,
        FAKE_PAYSTACK_WEBHOOK_URL: `${functions}/webhook-payments`,
        FAKE_PAYSTACK_WEBHOOK_SECRET: TEST_PAYMENTS_WEBHOOK_SECRET,
      },
      out,
      logFile,
    ),
    startFake(
      'KYC',
      'tests/fakes/kyc.ts',
      {
        ...env,
        FAKE_KYC_PORT: String(kycPort),
        FAKE_SUMSUB_APP_TOKEN: TEST_SUMSUB_APP_TOKEN,
        FAKE_SUMSUB_SECRET_KEY: TEST_SUMSUB_SECRET_KEY,
        FAKE_KYC_WEBHOOK_URL: `${functions}/webhook-kyc`,
        FAKE_KYC_WEBHOOK_SECRET: TEST_KYC_WEBHOOK_SECRET,
        FAKE_IDENTITY_API_KEY: TEST_IDENTITY_API_KEY,
        FAKE_IDENTITY_WEBHOOK_URL: `${functions}/webhook-identity`,
        FAKE_IDENTITY_WEBHOOK_TOKEN: TEST_IDENTITY_WEBHOOK_SECRET,
      },
      out,
      logFile,
    ),
  ]);
  const started = fakes.flatMap((f) => (f.status === 'fulfilled' ? [f.value] : []));
  const failed = fakes.find((f) => f.status === 'rejected');
  if (failed) {
    for (const f of started) if (f.exitCode === null) f.kill('SIGTERM');
    throw failed.reason;
  }
  const [fake, kycFake] = started as [ChildProcess, ChildProcess];
  const server = await startServer({
    env,
    out,
    timeoutMs: 120_000,
    failure: (why) => new Error(`test stack ${why}; see ${logFile}`),
  });
  return {
    baseUrl: `http://127.0.0.1:${httpPort}/functions/v1`,
    databaseUrl: `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`,
    fakePaystackUrl: `http://127.0.0.1:${fakePort}`,
    fakeKycUrl: `http://127.0.0.1:${kycPort}`,
    logFile,
    serverPid: server.pid,
    async stop() {
      if (fake.exitCode === null) fake.kill('SIGTERM');
      if (kycFake.exitCode === null) kycFake.kill('SIGTERM');
      if (server.child.exitCode !== null) return;
      await server.stop();
      out.end();
    },
  };
}
