// A stack of its own, as `npm start` starts it (local defaults, not the test stack's settings), on
// ports the system chose, with DATABASE_SESSION_URL set empty:
// - live streams without a session connection: the server never LISTENs, and its one poller reads
//   the log every second (events written here in SQL wake nothing: only the poll delivers them);
// - outbound webhooks attempted right after the write that caused them, without the job
//   (WEBHOOK_SEND_AFTER_WRITES is true by default; the test stack leaves webhooks to the job).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStartEnv, type Server } from '../support/stack.ts';
import { startServerOnFreePorts } from '../support/ports.ts';
import { openEvents } from '../support/sse.ts';
import { readBody } from '../support/receiver.ts';
import { verifyEscrowWebhook } from '../docs-examples/webhook-receiver/verify.ts';
import { LOCAL_SECRETS } from '../../shared/core/published-secrets.ts';
import { encryptSecret, generateSecret, importSecretKey } from '../../shared/webhooks/secrets.ts';

let base = '';
let server: Server | undefined;
let sql: postgres.Sql | undefined;
let dataDir = '';
let output = '';

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'events-poll-pg-'));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      output += chunk.toString();
      done();
    },
  });
  sink.on('error', () => {});
  const own = await startServerOnFreePorts({
    env: (httpPort, pgPort) => ({ ...npmStartEnv(httpPort, pgPort, dataDir), DATABASE_SESSION_URL: '' }),
    out: sink,
    timeoutMs: 90_000,
    failure: (why) => new Error(`the poll stack ${why}:\n${output}`),
  });
  server = own.server;
  const pgPort = own.pgPort;
  base = `http://127.0.0.1:${own.httpPort}/functions/v1`;
  sql = postgres(`postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`, { max: 2, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  await sql?.end();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function call(name: string, body: unknown) {
  const res = await fetch(`${base}/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  expect(res.status, JSON.stringify(answer)).toBeLessThan(300);
  return answer.data;
}

/** A user of the poll stack: the code read from its SMS outbox. */
async function signUp(phone: string): Promise<{ id: string; token: string }> {
  await call('auth-send-otp', { phone, context: 'signup' });
  const [sms] = await sql!<{ body: string }[]>`
    select body from private.sms_outbox where phone = ${phone} order by id desc limit 1`;
  const code = sms?.body.match(/\b\d{6}\b/)?.[0];
  await call('auth-verify', { phone, context: 'signup', otp_code: code });
  const signed = await call('auth-signup', {
    phone,
    first_name: 'Polly',
    last_name: 'Okafor',
    password: 'a long passphrase',
  });
  return { id: signed.user.id, token: signed.session.access_token };
}

describe('events-stream without DATABASE_SESSION_URL', () => {
  it('polls the log each second: an event written without any wake-up arrives, and nothing LISTENs', async () => {
    const user = await signUp('+2348031119001');
    const s = await openEvents({ base, token: user.token });
    expect(s.status).toBe(200);
    await sql!`select private.event_write('wallet', ${user.id}::uuid, null, array[${user.id}::uuid])`;
    const written = Date.now();
    const event = await s.next((e) => e.event === 'wallet', 5_000);
    expect(Date.now() - written).toBeLessThan(2_500);
    const wallet = await fetch(`${base}/wallet-get`, { headers: { Authorization: `Bearer ${user.token}` } });
    expect(JSON.parse(event.data)).toEqual((await wallet.json()).data);
    const listeners = await sql!<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where application_name = 'escrow-events-listener'`;
    expect(listeners[0]!.n).toBe(0);
    s.close();
  });
});

describe('outbound webhooks on a stack as npm start makes it', () => {
  it('go out right after the write that caused them, signed, without the job', async () => {
    const received: { headers: Record<string, string>; body: string }[] = [];
    const receiver = createServer(async (req, res) => {
      received.push({ headers: req.headers as Record<string, string>, body: await readBody(req) });
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const owner = await signUp('+2348031119002');
      const seller = await signUp('+2348031119003');
      const secret = generateSecret();
      const key = await importSecretKey(LOCAL_SECRETS.WEBHOOK_SECRET_KEY);
      await sql!`
        insert into private.webhook_endpoints (owner_id, url, secret_encrypted)
        values (${owner.id}, ${`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`},
                ${await encryptSecret(secret, key)})`;
      const res = await fetch(`${base}/escrow-create`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({
          category: 'goods_products',
          payer_role: 'initiator',
          title: 'Sent at once',
          counterparty_phone: '+2348031119003',
          amount: 5000,
        }),
      });
      expect(res.status).toBe(201);
      const created = Date.now();
      while (received.length === 0 && Date.now() - created < 5_000) await new Promise((r) => setTimeout(r, 50));
      expect(Date.now() - created).toBeLessThan(2_000);
      const event = verifyEscrowWebhook(secret, received[0]!.body, received[0]!.headers);
      expect(event?.type).toBe('escrow.created');
      expect(event?.data).toMatchObject({ title: 'Sent at once', status: 'draft' });
      expect(seller.id).toBeTruthy();
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });
});
