// The request-path part of `npm run bench` (docs/performance.md): authenticated reads over HTTP
// with autocannon against baselines served on the same database, money POSTs over HTTP against
// the same SQL function called directly, and a profile of what one request sends to Postgres.
import { spawn } from 'node:child_process';
import postgres from 'postgres';
import { feeBreakdown, type FeeSchedule } from '../../shared/escrow/fees.ts';
import { signPayload } from '../../shared/money/payments/signature.ts';
import { recordTier } from '../../tests/support/kyc-record.ts';
import { TEST_PAYMENTS_WEBHOOK_SECRET } from '../../tests/support/stack.ts';

const root = new URL('../../', import.meta.url);

export interface LoadRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU microseconds per request of each process named in autocannon's `cpu` option */
  cpuPerRequest: Record<string, number>;
}

/** autocannon (npm, run by Node) against one URL; its JSON summary. */
export async function autocannon(
  name: string,
  url: string,
  opts: {
    connections: number;
    seconds: number;
    headers?: Record<string, string>;
    /** CPU seconds used so far by each process to account for (stackCpu, processCpu) */
    cpu?: Record<string, () => number>;
  },
): Promise<LoadRow> {
  const args = [
    new URL('node_modules/autocannon/autocannon.js', root).pathname,
    '-j',
    '-c',
    String(opts.connections),
    '-d',
    String(opts.seconds),
  ];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}=${v}`);
  args.push(url);
  const cpuNow = () => Object.fromEntries(Object.entries(opts.cpu ?? {}).map(([k, read]) => [k, read()]));
  const cpuBefore = cpuNow();
  const out = await new Deno.Command('node', { args, stdout: 'piped', stderr: 'piped' }).output();
  const cpuAfter = cpuNow();
  const text = new TextDecoder().decode(out.stdout).trim().split('\n').at(-1) ?? '';
  if (!out.success || !text.startsWith('{')) {
    throw new Error(`autocannon failed for ${name}: ${new TextDecoder().decode(out.stderr)}`);
  }
  const r = JSON.parse(text);
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpuPerRequest: Object.fromEntries(
      Object.entries(cpuAfter).map(([k, v]) => [k, (1e6 * (v - (cpuBefore[k] ?? 0))) / Math.max(1, r.requests.total)]),
    ),
  };
}

/** The baseline server (scripts/lib/bench-baseline.ts) on `port`; resolves once it listens. */
export async function startBaseline(port: number, databaseUrl: string, poolMax: number) {
  const child = spawn(
    new URL('node_modules/.bin/deno', root).pathname,
    ['run', '--allow-all', 'scripts/lib/bench-baseline.ts', String(port), databaseUrl, String(poolMax)],
    { cwd: root.pathname, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('baseline server did not start')), 60_000);
    child.stdout?.on('data', (c: Uint8Array) => {
      if (new TextDecoder().decode(c).includes('baseline ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`baseline server exited with ${code}`)));
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    stop: () =>
      new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

export async function call(base: string, op: string, body: unknown, token?: string) {
  const res = await fetch(`${base}/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${op}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

let phoneSeq = 0;
const newPhone = (prefix: string) =>
  `+234${prefix}${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneSeq).padStart(5, '0')}`;

export interface BenchUser {
  id: string;
  phone: string;
  token: string;
}

/**
 * A user signed up over HTTP (the one-time code read from the SMS outbox), raised to `tier`
 * through private.kyc_record, as the KYC webhooks do (tests/support/kyc-record.ts).
 */
export async function benchUser(base: string, sql: postgres.Sql, tier = 0, firstName = 'Bench'): Promise<BenchUser> {
  const phone = newPhone('7');
  await call(base, 'auth-send-otp', { phone, context: 'signup' });
  const [row] = await sql<{ body: string }[]>`
    select body from private.sms_outbox where phone = ${phone} and body is not null order by id desc limit 1`;
  const otp = /\b(\d{6})\b/.exec(row?.body ?? '')?.[1];
  if (!otp) throw new Error(`no sign-up code for ${phone} in private.sms_outbox`);
  await call(base, 'auth-verify', { phone, context: 'signup', otp_code: otp });
  const s = await call(base, 'auth-signup', {
    phone,
    first_name: firstName,
    last_name: 'User',
    password: 'bench pass 123',
  });
  const id = s.user.id as string;
  const reached = tier > 0 ? await recordTier(sql, id, tier) : 0;
  if (reached !== tier) throw new Error(`KYC tier ${reached} for ${id}, expected ${tier}`);
  return { id, phone, token: s.session.access_token as string };
}

/** Money into a user's wallet as the provider's bank-transfer webhook would credit it. */
export async function creditWallet(sql: postgres.Sql, userId: string, kobo: number) {
  await sql`select private.bank_transfer_received(${userId}, ${kobo}, 'paystack', ${`bench-credit-${crypto.randomUUID()}`},
                                                 '{}'::jsonb)`;
}

/**
 * The reader of the read rows: 30 escrows (as the first measurements had), a conversation with 10
 * messages, and 10 deposits in the wallet, so every list has rows to show.
 */
export async function seedReader(base: string, sql: postgres.Sql) {
  const reader = await benchUser(base, sql, 2);
  const other = await benchUser(base, sql, 0);
  let conversation = '';
  for (let i = 0; i < 30; i++) {
    const e = await call(base, 'escrow-create', {
      category: 'goods_products',
      payer_role: 'initiator',
      title: `Bench deal ${i}`,
      counterparty_phone: other.phone,
      amount: 100_000 + i,
    }, reader.token);
    conversation ||= e.conversation_id;
  }
  for (let i = 0; i < 10; i++) {
    await call(base, 'message-send', { conversation_id: conversation, content: `Message ${i}` }, reader.token);
  }
  for (let i = 0; i < 10; i++) await creditWallet(sql, reader.id, 50_000 + i);
  return { ...reader, conversation };
}

/**
 * Escrows ready to release (funded from the payer's wallet, accepted, delivered), made with the
 * SQL functions the endpoints call: `count` of them, payer `payer`, payee `payee`.
 */
export async function releasableEscrows(
  sql: postgres.Sql,
  payer: { id: string },
  payee: { id: string; phone: string },
  count: number,
  parallel: number,
): Promise<string[]> {
  const [schedule] = await sql<FeeSchedule[]>`
    select fee_bps, min_fee::int, max_fee::int, payer_share_bps, vat_bps from private.fee_schedules
     where category = 'goods_products'`;
  const amount = 100_000;
  const fees = feeBreakdown(amount, schedule as FeeSchedule);
  await creditWallet(sql, payer.id, count * (amount + fees.payer_fee + fees.vat + 1_000));
  const ids: string[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < count) {
      next++;
      const [e] = await sql<{ escrow_id: string }[]>`
        select escrow_id from private.escrow_create(${payer.id}, 'goods_products', 'initiator', 'Bench release', '',
          ${payee.phone}, ${amount}, ${fees.payer_fee}, ${fees.vat}, ${fees.seller_fee}, ${crypto.randomUUID()})`;
      const id = e?.escrow_id as string;
      await sql`select private.escrow_fund_wallet_request(${id}, ${payer.id})`;
      await sql`select private.escrow_accept(${id}, ${payee.id})`;
      await sql`select private.escrow_deliver(${id}, ${payee.id}, now())`;
      ids.push(id);
    }
  }));
  return ids;
}

/** A signed bank-transfer charge.success for the virtual account `account`. */
export async function depositEvent(account: string, id: string) {
  const body = JSON.stringify({
    event: 'charge.success',
    data: {
      id,
      status: 'success',
      reference: `ref-${id}`,
      amount: 50_000,
      channel: 'dedicated_nuban',
      authorization: { receiver_bank_account_number: account },
    },
  });
  return { body, signature: await signPayload(TEST_PAYMENTS_WEBHOOK_SECRET, body) };
}

// ---- profile: what one request sends to Postgres ------------------------------------------------

/**
 * A TCP proxy in front of Postgres that reads both directions of the protocol: statements are
 * the server's CommandComplete and ErrorResponse messages; round trips are the times the client
 * spoke again after the server had answered (requests run one at a time, so each is a wait).
 */
export function countingProxy(listenPort: number, pgPort: number) {
  const counts = { statements: 0, roundTrips: 0 };
  const listener = Deno.listen({ hostname: '127.0.0.1', port: listenPort });
  (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({ hostname: '127.0.0.1', port: pgPort });
      let last: 'client' | 'server' = 'server';
      let pending = new Uint8Array(0);
      const messages = (chunk: Uint8Array) => {
        const buf = new Uint8Array(pending.length + chunk.length);
        buf.set(pending);
        buf.set(chunk, pending.length);
        let at = 0;
        while (buf.length - at >= 5) {
          const len = new DataView(buf.buffer, buf.byteOffset + at + 1, 4).getUint32(0);
          if (buf.length - at < 1 + len) break;
          const type = String.fromCharCode(buf[at] as number);
          if (type === 'C' || type === 'E') counts.statements++;
          at += 1 + len;
        }
        pending = buf.slice(at);
      };
      const pipe = async (from: Deno.Conn, to: Deno.Conn, side: 'client' | 'server') => {
        try {
          for await (const chunk of from.readable) {
            if (side === 'client' && last === 'server') counts.roundTrips++;
            last = side;
            if (side === 'server') messages(chunk);
            const writer = to.writable.getWriter();
            await writer.write(chunk);
            writer.releaseLock();
          }
        } catch { /* the other side closed */ }
        try {
          to.close();
        } catch { /* already closed */ }
      };
      pipe(client, server, 'client');
      pipe(server, client, 'server');
    }
  })().catch(() => {});
  return {
    counts,
    reset() {
      counts.statements = 0;
      counts.roundTrips = 0;
    },
    close: () => listener.close(),
  };
}

/**
 * A default payout account for `user`, saved through payout-add at a bank the Paystack fake knows
 * (registered through its control API); returns its id.
 */
export async function benchPayoutAccount(base: string, fakePaystackUrl: string, user: BenchUser): Promise<string> {
  const account_number = String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999)).slice(0, 10);
  const res = await fetch(`${fakePaystackUrl}/_fake/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ bank_code: '058', account_number, account_name: 'BENCH USER' }),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`fake Paystack /_fake/accounts: ${res.status}`);
  const saved = await call(
    base,
    'payout-add',
    { bank_code: '058', bank_name: 'Guaranty Trust Bank', account_number, account_name: 'Bench User' },
    user.token,
  );
  return saved.id as string;
}

/**
 * The stack a benchmark starts serves its functions as behind a gateway that bounds slow clients
 * (Supabase's): without the local server's guard, a TCP proxy in the same process that would
 * double every request's socket writes (docs/performance.md). HTTP_HEADER_TIMEOUT_MS=10000
 * measures with it.
 */
export function servedAsBehindAGateway(): void {
  if (!Deno.env.get('HTTP_HEADER_TIMEOUT_MS')) Deno.env.set('HTTP_HEADER_TIMEOUT_MS', 'off');
}
