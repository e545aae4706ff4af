// The `streams` section of `npm run bench` (BENCH_ONLY=streams; docs/performance.md, "Live streams
// and webhooks"). The streams are served by a second functions server (./bench-stream-server.ts),
// a process of its own on the bench stack's database with a deployment's pool (DB_POOL_MAX 2 by
// default), so that its memory, its CPU and the connections it holds are the streams' alone; the
// writes go to the bench stack's server, as they would to another instance.
//
//   setup     BENCH_STREAMS users (1,000) inserted as sign-up makes them (private.create_account,
//             no password to hash), each with an access token signed here; pairs of them share an
//             escrow, and so a conversation
//   open      every user opens one stream (50 at a time): the time, and the server's CPU an open
//   hold      BENCH_STREAM_IDLE_SECONDS (30) with every stream open and nothing written: the
//             server's and Postgres's CPU (heartbeats)
//   deliver   BENCH_STREAM_MESSAGES (200) messages over BENCH_STREAM_SEND_SECONDS (20), each by
//             one party of a pair through message-send on the bench stack's server: from its answer
//             (the commit, as the sender knows it) to its arrival on the other party's stream
//   poll      the streams closed, the same users poll message-feed every 3 s for the hold's
//             length, on the same server: requests a second and CPU, against the hold's
//   memory and connections are sampled every second while the streams are open: the server's
//   RSS, and the rows of pg_stat_activity whose client is one of its sockets
//
// A stream's CPU over its life (STREAM_MAX_SECONDS, 120 s) with 100 events is worked out from
// those: one open, 120 s of holding, and 100 deliveries (each the deliver phase's CPU, less the
// holding it also paid, a delivery).
import postgres from 'postgres';
import { SignJWT } from 'jose';
import { feeBreakdown, type FeeSchedule } from '../../shared/escrow/fees.ts';
import { TEST_JWT_SECRET, testStackEnv } from '../../tests/support/stack.ts';
import { cpuOf, stackCpu } from './stories.ts';

const root = new URL('../../', import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StreamBenchOptions {
  /** The bench stack: its functions (the writers' server), database and ports. */
  baseUrl: string;
  databaseUrl: string;
  httpPort: number;
  pgPort: number;
  /** Where the stream server listens. */
  streamPort: number;
  /** Goal lines for the bench's summary. */
  summary: string[];
}

const users = Number(Deno.env.get('BENCH_STREAMS') ?? 1000);
const messages = Number(Deno.env.get('BENCH_STREAM_MESSAGES') ?? 200);
const sendSeconds = Number(Deno.env.get('BENCH_STREAM_SEND_SECONDS') ?? 20);
const holdSeconds = Number(Deno.env.get('BENCH_STREAM_IDLE_SECONDS') ?? 30);
const poolMax = Number(Deno.env.get('BENCH_STREAM_POOL') ?? 2);
const pollEverySeconds = 3;
/** BENCH_STREAM_STATEMENTS=1 (with LOCAL_PG_PRELOAD=pg_stat_statements): what Postgres ran while delivering. */
const statements = Deno.env.get('BENCH_STREAM_STATEMENTS') === '1';
/** A stream's life on the server (STREAM_MAX_SECONDS's default), and the events of the goal. */
const LIFE_SECONDS = 120;
const LIFE_EVENTS = 100;

interface StreamUser {
  id: string;
  phone: string;
  token: string;
  conversation: string;
  /** The other party of the conversation. */
  other: number;
}

// ---- setup --------------------------------------------------------------------------------------

/**
 * `n` accounts as sign-up makes them (a verified phone, then private.create_account), without the
 * one-time codes and the password hash, each with a live session and an access token signed here.
 */
async function streamUsers(sql: postgres.Sql, n: number): Promise<StreamUser[]> {
  const base = 600_000_000 + Math.floor(Math.random() * 300_000_000);
  const phones = Array.from({ length: n }, (_, i) => `+2346${String(base + i).padStart(9, '0')}`);
  // the phones verified, as auth-verify leaves them for auth-signup
  await sql`insert into private.phone_verifications (phone, expires_at)
            select p, now() + interval '10 minutes' from unnest(${phones}::text[]) p`;
  const rows = await sql<{ phone: string; user_id: string; session_id: string }[]>`
    select p.phone, c.user_id, c.session_id
      from unnest(${phones}::text[]) as p(phone),
           lateral private.create_account(p.phone, 'bench: no password', 'Stream', 'User', md5(p.phone || random()::text),
                                          86400) c`;
  const key = new TextEncoder().encode(TEST_JWT_SECRET);
  const byPhone = new Map(rows.map((r) => [r.phone, r]));
  const out: StreamUser[] = [];
  for (const [i, phone] of phones.entries()) {
    const row = byPhone.get(phone)!;
    const token = await new SignJWT({ role: 'authenticated', session_id: row.session_id, phone })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(row.user_id)
      .setAudience('authenticated')
      .setIssuer('escrow-service')
      .setIssuedAt()
      .setExpirationTime('3600s')
      .sign(key);
    out.push({ id: row.user_id, phone, token, conversation: '', other: i % 2 === 0 ? i + 1 : i - 1 });
  }
  // users 2k and 2k + 1 share an escrow (private.escrow_create, as escrow-create calls it)
  const [schedule] = await sql<FeeSchedule[]>`
    select fee_bps, min_fee::int, max_fee::int, payer_share_bps, vat_bps from private.fee_schedules
     where category = 'goods_products'`;
  const fees = feeBreakdown(100_000, schedule as FeeSchedule);
  await Promise.all(
    Array.from({ length: Math.floor(n / 2) }, async (_, k) => {
      const [a, b] = [out[2 * k]!, out[2 * k + 1]!];
      const [e] = await sql<{ conversation_id: string }[]>`
        select conversation_id from private.escrow_create(${a.id}, 'goods_products', 'initiator', 'Stream bench', '',
          ${b.phone}, 100000, ${fees.payer_fee}, ${fees.vat}, ${fees.seller_fee}, ${crypto.randomUUID()})`;
      a.conversation = b.conversation = e!.conversation_id;
    }),
  );
  return out.filter((u) => u.conversation !== '');
}

/** The stream server: a process of its own on the bench stack's database (./bench-stream-server.ts). */
async function startStreamServer(o: StreamBenchOptions) {
  const env = {
    ...testStackEnv(o.httpPort, o.pgPort),
    PORT: String(o.streamPort),
    DATABASE_URL: o.databaseUrl,
    // LISTEN on a direct connection, as scripts/start.ts does on its embedded database
    DATABASE_SESSION_URL: o.databaseUrl,
    ESCROW_LOCAL_STACK: '1',
    DB_POOL_MAX: String(poolMax),
    // the defaults, not the test stack's short ones
    STREAM_HEARTBEAT_SECONDS: '15',
    STREAM_MAX_SECONDS: String(LIFE_SECONDS),
  };
  const child = new Deno.Command(Deno.execPath(), {
    args: ['run', '--allow-all', 'scripts/lib/bench-stream-server.ts', String(o.streamPort)],
    cwd: root.pathname,
    env,
    stdout: 'piped',
    stderr: 'inherit',
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = '';
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  while (!seen.includes('stream server ready')) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream server exited before it was ready: ${seen}`);
    seen += value;
  }
  clearTimeout(deadline);
  // its log lines (warnings) are read and dropped, so that the pipe never fills
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })().catch(() => {});
  return {
    pid: child.pid,
    url: `http://127.0.0.1:${o.streamPort}/functions/v1`,
    async stop() {
      child.kill('SIGTERM');
      await child.status;
    },
  };
}

// ---- the streams, as a client reads them --------------------------------------------------------

/**
 * One user's stream, read as an app reads it: opened with the token, and opened again with the
 * last id received when the server ends it (after the `retry:` it suggested).
 */
class BenchStream {
  /** Streams that broke after they were live, of all of them. */
  static failures = 0;
  lastId: string | null = null;
  reconnects = 0;
  private live = false;
  private abort = new AbortController();
  private closed = false;

  constructor(
    private readonly url: string,
    readonly user: StreamUser,
    private readonly onMessage: (id: string, at: number) => void,
  ) {}

  /** Resolves once the stream said `ready`; it then runs until close(). */
  open(): Promise<void> {
    return new Promise<void>((ready, fail) => {
      void this.run(ready, fail);
    });
  }

  private async run(ready: () => void, fail: (err: Error) => void): Promise<void> {
    let retry = 1_000;
    while (!this.closed) {
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${this.user.token}` };
        if (this.lastId) headers['last-event-id'] = this.lastId;
        const res = await fetch(`${this.url}/events-stream`, { headers, signal: this.abort.signal });
        if (res.status !== 200 || !res.body) throw new Error(`events-stream: ${res.status} ${await res.text()}`);
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of res.body) {
          buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (block === ': ready') {
              this.live = true;
              ready();
            }
            let id: string | null = null;
            let event = '';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) id = line.slice(4);
              else if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data = line.slice(6);
              else if (line.startsWith('retry: ')) retry = Number(line.slice(7));
            }
            if (id) this.lastId = id;
            if (event === 'message') this.onMessage(JSON.parse(data).id as string, performance.now());
          }
        }
      } catch (err) {
        if (this.closed) return;
        if (!this.live) return fail(err instanceof Error ? err : new Error(String(err)));
        // a stream that was live and broke is opened again, as an app would
        if (++BenchStream.failures <= 3) {
          console.error(`  a stream failed: ${err instanceof Error ? err.message : err}`);
        }
      }
      if (this.closed) return;
      // the server ended it (STREAM_MAX_SECONDS): back after its retry hint, resuming
      await sleep(retry);
      this.reconnects++;
    }
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
  }
}

// ---- what the server holds ----------------------------------------------------------------------

/** The local ports of a process's TCP sockets (its fds, matched in /proc/net/tcp by inode). */
function localPortsOf(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`));
      if (m) inodes.add(m[1] as string);
    } catch { /* closed meanwhile */ }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of Deno.readTextFileSync(table).split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9] as string)) {
        ports.push(parseInt((cols[1] as string).split(':')[1] as string, 16));
      }
    }
  }
  return ports;
}

/** The rows of pg_stat_activity whose client is a socket of `pid`, by application_name. */
async function connectionsOf(sql: postgres.Sql, pid: number): Promise<Record<string, number>> {
  const ports = localPortsOf(pid);
  const rows = await sql<{ app: string; n: number }[]>`
    select application_name as app, count(*)::int as n from pg_stat_activity
     where client_port = any(${ports}::int[]) group by 1`;
  return Object.fromEntries(rows.map((r) => [r.app, r.n]));
}

/** RSS and its peak (VmHWM) of a process, in MB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Samples the server's memory and connections every second until stopped: the highest of each. */
function sampler(sql: postgres.Sql, pid: number) {
  const most = { rss: 0, connections: 0, byApp: {} as Record<string, number> };
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      most.rss = Math.max(most.rss, memoryOf(pid).rss);
      const byApp = await connectionsOf(sql, pid);
      const total = Object.values(byApp).reduce((a, b) => a + b, 0);
      if (total > most.connections) Object.assign(most, { connections: total, byApp });
      await sleep(1_000);
    }
  })();
  return {
    most,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

// ---- the measures -------------------------------------------------------------------------------

interface Cpu {
  /** The stream server's process. */
  server: number;
  /** Postgres's backends serving the stream server's connections (the pool and the LISTEN). */
  backends: number;
  /** All of Postgres (the writers' requests included, when there are any). */
  postgres: number;
}

function cpuMeter(sql: postgres.Sql, serverPid: number, pgPort: number) {
  const pg = stackCpu({ serverPid }, pgPort).postgres as () => number;
  const backends = async () => {
    const rows = await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where client_port = any(${localPortsOf(serverPid)}::int[])`;
    let total = 0;
    for (const r of rows) total += cpuOf(r.pid);
    return total;
  };
  const read = async (): Promise<Cpu> => ({ server: cpuOf(serverPid), backends: await backends(), postgres: pg() });
  return {
    /** Runs `work` and returns the CPU seconds it cost, and its seconds. */
    async over<T>(work: () => Promise<T>): Promise<{ result: T; cpu: Cpu; seconds: number }> {
      const before = await read();
      const t = performance.now();
      const result = await work();
      const seconds = (performance.now() - t) / 1000;
      const after = await read();
      const cpu = {
        server: after.server - before.server,
        backends: after.backends - before.backends,
        postgres: after.postgres - before.postgres,
      };
      return { result, cpu, seconds };
    },
  };
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const ms = (x: number) => `${x.toFixed(0)} ms`;
const cpuMs = (s: number) => `${(s * 1000).toFixed(1)} ms`;

/** Opens every user's stream, 50 at a time. */
async function openAll(streams: BenchStream[]): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < streams.length) await streams[next++]!.open();
  }));
}

/**
 * `messages` messages over `sendSeconds`, each by one party of a pair through message-send on the
 * writers' server; each one's latency from its answer, and from its request, to its arrival on
 * the other party's stream.
 */
async function deliver(baseUrl: string, all: StreamUser[], arrivals: Map<string, Map<string, number>>) {
  const sent: { id: string; to: string; requested: number; answered: number }[] = [];
  let errors = 0;
  const gap = (sendSeconds * 1000) / messages;
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < messages; i++) {
    await sleep(Math.max(0, started + i * gap - performance.now()));
    // pair i (wrapping), from either party
    const from = all[2 * (i % Math.floor(all.length / 2)) + (i % 2)]!;
    const to = all[from.other]!;
    pending.push((async () => {
      const requested = performance.now();
      const res = await fetch(`${baseUrl}/message-send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${from.token}` },
        body: JSON.stringify({ conversation_id: from.conversation, content: `Stream bench ${i}` }),
      });
      const answered = performance.now();
      const body = await res.json();
      if (res.status !== 201) {
        if (++errors <= 3) console.error(`  message-send: ${res.status} ${JSON.stringify(body)}`);
        return;
      }
      sent.push({ id: body.data.id, to: to.id, requested, answered });
    })());
  }
  await Promise.all(pending);
  // what has not arrived 5 s after the last answer is counted as missed
  const waitUntil = performance.now() + 5_000;
  while (performance.now() < waitUntil && sent.some((s) => !arrivals.get(s.id)?.has(s.to))) await sleep(100);
  const fromAnswer: number[] = [];
  const fromRequest: number[] = [];
  let missed = 0;
  for (const s of sent) {
    const at = arrivals.get(s.id)?.get(s.to);
    if (at === undefined) missed++;
    else {
      fromAnswer.push(at - s.answered);
      fromRequest.push(at - s.requested);
    }
  }
  let deliveries = 0;
  for (const s of sent) deliveries += arrivals.get(s.id)?.size ?? 0;
  return {
    sent: sent.length,
    errors,
    missed,
    deliveries,
    fromAnswer: fromAnswer.sort((a, b) => a - b),
    fromRequest: fromRequest.sort((a, b) => a - b),
  };
}

/** Every user polls message-feed of their conversation every 3 s for `seconds`, starting spread out. */
async function poll(url: string, all: StreamUser[], seconds: number) {
  const latencies: number[] = [];
  let failed = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(all.map(async (u) => {
    await sleep(Math.random() * pollEverySeconds * 1000);
    while (performance.now() < deadline) {
      const t = performance.now();
      try {
        const res = await fetch(`${url}/message-feed?conversation_id=${u.conversation}&limit=20`, {
          headers: { authorization: `Bearer ${u.token}` },
        });
        await res.arrayBuffer();
        if (res.status === 200) latencies.push(performance.now() - t);
        else failed++;
      } catch {
        failed++;
      }
      await sleep(Math.max(0, t + pollEverySeconds * 1000 - performance.now()));
    }
  }));
  return { ok: latencies.length, failed, latencies: latencies.sort((a, b) => a - b) };
}

/** The statements Postgres spent the most time on since the reset. */
async function printStatements(sql: postgres.Sql): Promise<void> {
  const rows = await sql<{ query: string; calls: string; total: string; per_call: string }[]>`
    select regexp_replace(query, '[[:space:]]+', ' ', 'g') as query, calls::text,
           round(total_exec_time + total_plan_time)::text as total,
           round(((total_exec_time + total_plan_time) / calls * 1000)::numeric)::text as per_call
      from pg_stat_statements where calls > 0 order by total_exec_time + total_plan_time desc limit 12`;
  console.log('  deliver: the statements Postgres spent the most time on (ms in all, calls, µs a call)');
  for (const r of rows) {
    console.log(
      `    ${r.total.padStart(6)}  ${r.calls.padStart(6)}  ${r.per_call.padStart(7)}  ${r.query.slice(0, 140)}`,
    );
  }
}

// ---- the section --------------------------------------------------------------------------------

export async function streamRuns(o: StreamBenchOptions): Promise<void> {
  const sql = postgres(o.databaseUrl, { max: 16, onnotice: () => {} });
  const server = await startStreamServer(o).catch(async (err) => {
    await sql.end();
    throw err;
  });
  const streams: BenchStream[] = [];
  try {
    console.log(
      `\nstreams: ${users} users, one stream each, on a server of their own (pool ${poolMax}; setting up...)`,
    );
    const all = await streamUsers(sql, users);
    const idle = memoryOf(server.pid);
    console.log(
      `  ${all.length} users in ${all.length / 2} conversations; the stream server idle: RSS ${idle.rss.toFixed(0)} MB`,
    );
    const meter = cpuMeter(sql, server.pid, o.pgPort);

    // every stream, and what arrived on it: message id -> user -> when
    const arrivals = new Map<string, Map<string, number>>();
    for (const u of all) {
      streams.push(
        new BenchStream(server.url, u, (id, at) => {
          const seen = arrivals.get(id) ?? new Map<string, number>();
          if (!seen.has(u.id)) seen.set(u.id, at);
          arrivals.set(id, seen);
        }),
      );
    }
    const watch = sampler(sql, server.pid);

    // open
    const opened = await meter.over(() => openAll(streams));
    const perOpen = opened.cpu.server / streams.length;
    console.log(
      `  open: ${streams.length} streams in ${opened.seconds.toFixed(1)} s; CPU an open: server ${
        cpuMs(perOpen)
      }, its backends in postgres ${cpuMs(opened.cpu.backends / streams.length)}`,
    );

    // hold
    console.log(`  hold: ${streams.length} streams open, nothing written, ${holdSeconds} s...`);
    const held = await meter.over(() => sleep(holdSeconds * 1000));
    const reconnectsHeld = streams.reduce((n, s) => n + s.reconnects, 0);
    const mem = memoryOf(server.pid);
    const conns = await connectionsOf(sql, server.pid);
    console.log(
      `  hold: CPU server ${(held.cpu.server / held.seconds * 100).toFixed(1)} % of a core, postgres ${
        (held.cpu.postgres / held.seconds * 100).toFixed(1)
      } % (its backends ${(held.cpu.backends / held.seconds * 100).toFixed(1)} %); RSS ${
        mem.rss.toFixed(0)
      } MB; its connections ${JSON.stringify(conns)}`,
    );

    // deliver
    console.log(`  deliver: ${messages} messages over ${sendSeconds} s through message-send on the bench stack...`);
    if (statements) {
      await sql`create extension if not exists pg_stat_statements`;
      await sql`select pg_stat_statements_reset()`;
    }
    const delivered = await meter.over(() => deliver(o.baseUrl, all, arrivals));
    if (statements) await printStatements(sql);
    const d = delivered.result;
    console.log(
      `  deliver: CPU server ${cpuMs(delivered.cpu.server)}, its backends ${
        cpuMs(delivered.cpu.backends)
      }, all of postgres ${cpuMs(delivered.cpu.postgres)} (the writes included) over ${delivered.seconds.toFixed(1)} s`,
    );
    console.log(
      `  deliver: ${d.sent} sent (${d.errors} refused), ${d.missed} not on the recipient's stream after 5 s, ${d.deliveries} deliveries in all`,
    );
    console.log(
      `  from the answer to the recipient's stream: p50 ${ms(pct(d.fromAnswer, 50))}  p95 ${
        ms(pct(d.fromAnswer, 95))
      }  p99 ${ms(pct(d.fromAnswer, 99))}  max ${ms(d.fromAnswer.at(-1) ?? NaN)}`,
    );
    console.log(
      `  from the request:                       p50 ${ms(pct(d.fromRequest, 50))}  p95 ${
        ms(pct(d.fromRequest, 95))
      }  p99 ${ms(pct(d.fromRequest, 99))}`,
    );
    const reconnects = streams.reduce((n, s) => n + s.reconnects, 0);
    await watch.stop();
    const peak = memoryOf(server.pid).peak;
    console.log(
      `  while open: RSS at most ${watch.most.rss.toFixed(0)} MB (peak of the process ${
        peak.toFixed(0)
      } MB); at most ${watch.most.connections} connections ${
        JSON.stringify(watch.most.byApp)
      }; reconnects ${reconnects}, streams broken ${BenchStream.failures}`,
    );
    for (const s of streams) s.close();
    await sleep(2_000);

    // poll
    console.log(
      `  poll: the same ${all.length} users poll message-feed every ${pollEverySeconds} s, ${holdSeconds} s...`,
    );
    const polled = await meter.over(() => poll(server.url, all, holdSeconds));
    const p = polled.result;
    console.log(
      `  poll: ${(p.ok / polled.seconds).toFixed(0)} requests/s (${p.failed} failed), p50 ${
        ms(pct(p.latencies, 50))
      } p99 ${ms(pct(p.latencies, 99))}; CPU server ${
        (polled.cpu.server / polled.seconds * 100).toFixed(1)
      } % of a core, postgres ${(polled.cpu.postgres / polled.seconds * 100).toFixed(1)} %`,
    );

    // a stream's life: one open, 120 s held, 100 deliveries
    const holdRate = held.cpu.server / held.seconds / streams.length; // CPU-s a stream-second
    const holdRatePg = held.cpu.backends / held.seconds / streams.length;
    const perDelivery = Math.max(0, delivered.cpu.server - holdRate * streams.length * delivered.seconds) /
      Math.max(1, d.deliveries);
    const perDeliveryPg = Math.max(0, delivered.cpu.backends - holdRatePg * streams.length * delivered.seconds) /
      Math.max(1, d.deliveries);
    const life = perOpen + holdRate * LIFE_SECONDS + perDelivery * LIFE_EVENTS;
    const lifePg = opened.cpu.backends / streams.length + holdRatePg * LIFE_SECONDS + perDeliveryPg * LIFE_EVENTS;
    console.log(
      `  a stream's life (${LIFE_SECONDS} s, ${LIFE_EVENTS} events): server ${cpuMs(life)} = open ${
        cpuMs(perOpen)
      } + ${LIFE_SECONDS} s held ${cpuMs(holdRate * LIFE_SECONDS)} + ${LIFE_EVENTS} deliveries x ${
        cpuMs(perDelivery)
      }; its backends in postgres ${cpuMs(lifePg)} (a delivery ${cpuMs(perDeliveryPg)})`,
    );
    // streams in steady state: held, and each opened again once a life
    const streamCpuRate = (held.cpu.server + held.cpu.postgres) / held.seconds +
      (streams.length / LIFE_SECONDS) * (opened.cpu.server + opened.cpu.postgres) / streams.length;
    const pollCpuRate = (polled.cpu.server + polled.cpu.postgres) / polled.seconds;
    const streamRequests = streams.length / LIFE_SECONDS;
    console.log(
      `  polling vs streams, ${all.length} users: ${(p.ok / polled.seconds).toFixed(0)} vs ${
        streamRequests.toFixed(1)
      } requests/s (streams: one open a life; ${reconnectsHeld} reopened while held), CPU (server + postgres) ${
        (pollCpuRate * 100).toFixed(1)
      } % vs ${(streamCpuRate * 100).toFixed(1)} % of a core (${(pollCpuRate / streamCpuRate).toFixed(1)}x)`,
    );

    const p99 = pct(d.fromAnswer, 99);
    o.summary.push(
      `streams: ${streams.length} open, RSS at most ${watch.most.rss.toFixed(0)} MB (goal <= 256: ${
        goal(watch.most.rss <= 256 && streams.length >= 1000)
      }), at most ${watch.most.connections} database connections (goal <= 2: ${goal(watch.most.connections <= 2)})`,
      `streams: commit to delivery p99 ${ms(p99)}, ${d.missed} missed (goal < 1 s: ${
        goal(p99 < 1000 && d.missed === 0 && d.sent === messages)
      })`,
      `streams: a stream's CPU over ${LIFE_SECONDS} s with ${LIFE_EVENTS} events ${cpuMs(life)} (goal < 2 s: ${
        goal(life < 2)
      })`,
      `streams vs polling every ${pollEverySeconds} s: CPU ${(streamCpuRate * 100).toFixed(1)} % vs ${
        (pollCpuRate * 100).toFixed(1)
      } % of a core, requests ${streamRequests.toFixed(1)}/s vs ${(p.ok / polled.seconds).toFixed(0)}/s`,
    );
  } finally {
    for (const s of streams) s.close();
    await server.stop();
    await sql.end();
  }
}

const goal = (ok: boolean) => (ok ? 'met' : 'NOT MET');
