// Live streams without a session connection (DATABASE_SESSION_URL empty): the server never
// LISTENs, and its one poller reads the log every second. A stack of its own, as `npm start`
// starts it with DATABASE_SESSION_URL set empty, on the test stack's ports plus 20. Events are
// written here in SQL, so no write request of this server wakes its reader: only the poll can
// deliver them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Server, startServer } from '../support/stack.ts';
import { openEvents } from '../support/sse.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const httpPort = Number(new URL(inject('baseUrl')).port) + 20;
const pgPort = Number(new URL(inject('databaseUrl')).port) + 20;
const base = `http://127.0.0.1:${httpPort}/functions/v1`;
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
  server = await startServer({
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? root,
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      PORT: String(httpPort),
      PG_PORT: String(pgPort),
      ESCROW_DATA_DIR: dataDir,
      DATABASE_SESSION_URL: '',
    },
    out: sink,
    timeoutMs: 90_000,
    failure: (why) => new Error(`the poll stack ${why}:\n${output}`),
  });
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
