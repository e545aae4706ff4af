// Starts the real local stack (embedded Postgres + the Deno functions server) for the tests,
// exactly as `npm start` does, on test ports with a fresh data folder.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TEST_SECRETS } from '../../shared/published-secrets.ts';

export const TEST_JWT_SECRET: string = TEST_SECRETS.AUTH_JWT_SECRET;
export const TEST_PAYMENTS_WEBHOOK_SECRET: string = TEST_SECRETS.PAYMENTS_WEBHOOK_SECRET;
export const TEST_KYC_WEBHOOK_SECRET: string = TEST_SECRETS.KYC_WEBHOOK_SECRET;
export const TEST_IDENTITY_WEBHOOK_SECRET: string = TEST_SECRETS.IDENTITY_WEBHOOK_SECRET;
export const TEST_PAYSTACK_SECRET_KEY: string = TEST_SECRETS.PAYSTACK_SECRET_KEY;
export const TEST_JOBS_SECRET: string = TEST_SECRETS.JOBS_SECRET;

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface Stack {
  baseUrl: string;
  databaseUrl: string;
  fakePaystackUrl: string;
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
    JOBS_SECRET: TEST_JOBS_SECRET,
    SMS_PROVIDER: 'outbox',
    // every test runs from 127.0.0.1: the per-address limit is raised, the per-phone ones are not
    OTP_IP_MAX_PER_HOUR: '100000',
    // the real Paystack adapter, pointed at the local fake (tests/fakes/paystack.ts)
    PAYMENTS_PROVIDER: 'paystack',
    PAYSTACK_SECRET_KEY: TEST_PAYSTACK_SECRET_KEY,
    PAYSTACK_BASE_URL: `http://127.0.0.1:${httpPort + 2}`,
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
  const fake: ChildProcess = spawn(`${root}node_modules/.bin/deno`, [
    'run',
    '--allow-net',
    '--allow-env',
    'tests/fakes/paystack.ts',
  ], {
    cwd: root,
    env: {
      ...env,
      FAKE_PAYSTACK_PORT: String(fakePort),
      FAKE_PAYSTACK_SECRET_KEY: TEST_PAYSTACK_SECRET_KEY,
      FAKE_PAYSTACK_WEBHOOK_URL: `http://127.0.0.1:${httpPort}/functions/v1/webhook-payments`,
      FAKE_PAYSTACK_WEBHOOK_SECRET: TEST_PAYMENTS_WEBHOOK_SECRET,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  fake.stderr?.pipe(out);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fake Paystack did not start; see ${logFile}`)), 60_000);
    fake.stdout?.on('data', (chunk: Buffer) => {
      out.write(chunk);
      if (chunk.toString().includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    fake.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fake Paystack exited with code ${code}; see ${logFile}`));
    });
  });
  fake.removeAllListeners('exit');
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
    const timer = setTimeout(() => reject(new Error(`test stack did not start in 120 s; see ${logFile}`)), 120_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out.write(chunk);
      if (seen !== null) {
        seen += chunk.toString();
        if (seen.includes('ready:')) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`test stack exited with code ${code}; see ${logFile}`));
    });
  });
  child.removeAllListeners('exit');
  return {
    baseUrl: `http://127.0.0.1:${httpPort}/functions/v1`,
    databaseUrl: `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`,
    fakePaystackUrl: `http://127.0.0.1:${fakePort}`,
    logFile,
    serverPid: child.pid as number,
    async stop() {
      if (fake.exitCode === null) fake.kill('SIGTERM');
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timeout);
      out.end();
    },
  };
}
