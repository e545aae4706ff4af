// scripts/smoke.ts (npm run smoke -- <functions_base_url>), run as a deployer runs it, against the
// test stack: every check passes against the real server, with a token and an origin and without
// them (then skipped, saying so); and against a server with checks broken (a proxy in front of the
// real one that answers 200 where a 401 is due, accepts a wrong webhook signature, drops a security
// header) it exits 1 naming exactly the broken checks. It only reads: the user's wallet and the
// webhook tables are as they were.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { signUp, type TestUser } from '../support/users.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs npm run smoke's command with only the given variables (no SMOKE_* from the shell running the tests). */
function smoke(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(`${root}node_modules/.bin/deno`, ['run', '--allow-all', 'scripts/smoke.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? root, NO_COLOR: '1', ...env },
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

const lines = (r: Run, status: 'ok' | 'FAIL' | 'skip') =>
  r.stdout.split('\n').filter((l) => l.startsWith(`${status.padEnd(4)}  `)).map((l) => l.slice(6));

const READS = [
  'profile-get',
  'wallet-get',
  'escrow-list',
  'notification-list',
  'kyc-status',
  'transaction-list',
  'conversation-list',
];
const WEBHOOKS = ['webhook-payments', 'webhook-kyc', 'webhook-identity'];

let user: TestUser;

/** What the smoke check must leave as it was: the user's rows, and webhook payloads it sent. */
async function written(userId: string) {
  const [row] = await testDb()<
    { profile: string; transactions: number; notifications: number; smoke_payloads: number }[]
  >`
    select (select updated_at::text from public.profiles where id = ${userId}) as profile,
           (select count(*)::int from public.transactions where user_id = ${userId}) as transactions,
           (select count(*)::int from public.notifications where user_id = ${userId}) as notifications,
           (select count(*)::int from private.webhook_inbox where payload ? 'smoke')
             + (select count(*)::int from private.webhook_failures where payload ? 'smoke')
             + (select count(*)::int from private.kyc_webhook_inbox where payload ? 'smoke') as smoke_payloads`;
  return row!;
}

beforeAll(async () => {
  user = await signUp({ tier: 1 });
}, 60_000);

describe('scripts/smoke.ts', () => {
  it('passes every check against the real server, given a token and an origin, and writes nothing', async () => {
    const before = await written(user.id);
    const run = await smoke([baseUrl()], { SMOKE_TOKEN: user.accessToken, SMOKE_ORIGIN: 'https://app.example.ng' });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(lines(run, 'FAIL')).toEqual([]);
    expect(lines(run, 'skip')).toEqual([]);
    const ok = lines(run, 'ok');
    expect(ok.some((l) => l.startsWith('the OpenAPI document is served'))).toBe(true);
    expect(ok.some((l) => l.startsWith('CORS preflight from an allowed origin'))).toBe(true);
    expect(ok.some((l) => l.startsWith('every answer carries the security headers'))).toBe(true);
    for (const name of READS) {
      expect(ok, name).toContain(`${name} without a token answers 401`);
      expect(ok, name).toContain(`${name} with SMOKE_TOKEN answers 200`);
    }
    for (const name of WEBHOOKS) {
      expect(ok.some((l) => l.startsWith(`${name} refuses a wrong signature with 401`)), name).toBe(true);
    }
    expect(run.stdout).toMatch(/smoke: all \d+ checks passed\n$/);
    // nothing written: the user's rows as they were, and no webhook body of the smoke's kept anywhere
    expect(await written(user.id)).toEqual(before);
    expect(before.smoke_payloads).toBe(0);
  }, 60_000);

  it('without SMOKE_TOKEN or an origin skips those checks, saying which and why, and passes the rest', async () => {
    const run = await smoke([`${baseUrl()}/`]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const skipped = lines(run, 'skip');
    expect(skipped[0]).toMatch(/^CORS preflight from an allowed origin .*set SMOKE_ORIGIN/);
    expect(skipped.slice(1)).toEqual(READS.map((n) => `${n} with SMOKE_TOKEN answers 200: SMOKE_TOKEN is not set`));
    expect(run.stdout).toMatch(/smoke: all \d+ checks passed \(8 skipped: see above\)\n$/);
  }, 60_000);

  it('fails the reads with a token the server refuses, naming each check', async () => {
    const run = await smoke([baseUrl(), '--origin=https://app.example.ng'], { SMOKE_TOKEN: 'not-a-token' });
    expect(run.code).toBe(1);
    const failed = lines(run, 'FAIL');
    expect(failed).toEqual(
      READS.map((n) =>
        `${n} with SMOKE_TOKEN answers 200: expected 200 with the success envelope, got 401 unauthenticated`
      ),
    );
  }, 60_000);

  it('refuses to run without a base URL (exit 2, with the usage)', async () => {
    const none = await smoke([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: npm run smoke -- <functions_base_url>');
    expect((await smoke(['ftp://example.ng/functions/v1'])).code).toBe(2);
  }, 30_000);

  describe('against a server with checks broken', () => {
    let proxy: Server;
    let proxyBase = '';

    beforeAll(async () => {
      // forwards to the real server, except: profile-get answers 200 without a token, webhook-kyc
      // takes any signature, the OpenAPI document comes without X-Content-Type-Options, and a
      // preflight without Access-Control-Allow-Origin (as when CORS_ALLOW_ORIGIN does not list it)
      proxy = createServer((req, res) => {
        const name = (req.url ?? '').split('?')[0]?.split('/').pop() ?? '';
        if (name === 'profile-get' && req.method === 'GET' && !req.headers.authorization) {
          res.writeHead(200, {
            'content-type': 'application/json',
            'x-content-type-options': 'nosniff',
            'x-request-id': 'x',
          });
          res.end('{"success":true,"status":200,"data":{}}');
          return;
        }
        if (name === 'webhook-kyc') {
          res.writeHead(200, {
            'content-type': 'application/json',
            'x-content-type-options': 'nosniff',
            'x-request-id': 'x',
          });
          res.end('{"success":true,"status":200,"data":{"received":true}}');
          return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          const headers = Object.fromEntries(
            Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && k !== 'host'),
          ) as Record<string, string>;
          const upstream = await fetch(`${baseUrl()}/${name}`, {
            method: req.method,
            headers,
            body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
          });
          const out: Record<string, string> = {};
          upstream.headers.forEach((v, k) => {
            if (k === 'content-length' || k === 'content-encoding' || k === 'transfer-encoding') return;
            if (name === 'openapi' && k === 'x-content-type-options') return;
            if (req.method === 'OPTIONS' && k === 'access-control-allow-origin') return;
            out[k] = v;
          });
          res.writeHead(upstream.status, out);
          res.end(Buffer.from(await upstream.arrayBuffer()));
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/functions/v1`;
    });

    afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

    it('exits 1 and names exactly the broken checks, in its progress and its summary', async () => {
      const run = await smoke([proxyBase], { SMOKE_TOKEN: user.accessToken, SMOKE_ORIGIN: 'https://app.example.ng' });
      expect(run.code, run.stdout).toBe(1);
      const failed = lines(run, 'FAIL');
      expect(failed).toEqual([
        'CORS preflight from an allowed origin (profile-get): no Access-Control-Allow-Origin for https://app.example.ng: CORS_ALLOW_ORIGIN does not list it',
        'profile-get without a token answers 401: expected 401 unauthenticated, got 200',
        'webhook-kyc refuses a wrong signature with 401: expected 401 invalid_signature, got 200',
        expect.stringMatching(
          /^every answer carries the security headers \(\d+ answers\): openapi lacks X-Content-Type-Options: nosniff$/,
        ),
      ]);
      // the summary lists every failure again, after the progress
      const summary = run.stdout.slice(run.stdout.indexOf('smoke: 4 of '));
      expect(summary).toMatch(/^smoke: 4 of \d+ checks failed:\n/);
      for (const f of failed) expect(summary).toContain(`  - ${f}`);
      // the checks not broken still pass through the proxy
      expect(lines(run, 'ok')).toContain('wallet-get without a token answers 401');
    }, 60_000);
  });
});
