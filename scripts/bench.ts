// `npm run bench`: ledger posting throughput, measured against pgbench's tpcb-like script run on
// the same database in the same run (the baseline). Not a test: it prints figures.
//
//   1. baseline   pgbench -b tpcb-like, BENCH_CLIENTS clients, BENCH_SECONDS seconds
//   2. sql        private.post_transfer called directly, one posting per transaction:
//                   isolated  each client: payer -100, payee +99, and +1 to a fee account of
//                             its own (no two clients share a row)
//                   shared    the same, with the fee paid into the one platform fee account
//                             (sharded: post_transfer picks the shard of the connection)
//                   hot row   the same, but every fee lands on one fee row (what sharding avoids)
//   3. http       signed charge.success webhooks (bank transfers into virtual accounts) through
//                 webhook-payments on the real Deno server: one posting per request, against
//                 private.bank_transfer_received (what it calls) called directly; escrow-release
//                 over HTTP against private.escrow_release called directly
//   4. reads      authenticated GETs over HTTP (autocannon, BENCH_CONNECTIONS connections) against
//                 a bare Deno server, Deno + one postgres.js query (the reference) and the naive
//                 transaction (BEGIN, set_config, query, COMMIT, each awaited) on the same database
//   5. profile    what one request of each kind sends to Postgres: statements and round trips,
//                 counted by a proxy that reads the protocol, the handlers run in this process
//   6. keys       idempotent POSTs with an Idempotency-Key (escrow-create, escrow-release,
//                 wallet-withdraw): statements and round trips per request, counted as in profile,
//                 for this checkout and, with BENCH_PROFILE_BEFORE=<another checkout>, for that one
//                 in the same run; and each over HTTP against its SQL function called directly
//                 (BENCH_KEYS_AFTER_FIRST=1: this checkout's handlers measured first)
//   7. creates    escrow creations: one creator against BENCH_CLIENTS creators calling
//                 private.escrow_create directly, with the old table-wide lock (its trigger put back
//                 for the measure) and without it, in one run; then the creators over HTTP
//   8. streams    live streams (scripts/lib/bench-streams.ts): BENCH_STREAMS (1000) users, one stream
//                 each, on a second functions server of their own (BENCH_STREAM_POOL connections, 2;
//                 on BENCH_HTTP_PORT + 4): its RSS and the database connections it holds while they
//                 are open; from message-send's answer on the bench stack's server to the message
//                 on the recipient's stream (BENCH_STREAM_MESSAGES, 200, over
//                 BENCH_STREAM_SEND_SECONDS, 20); CPU a stream over its 120 s life with 100 events;
//                 the same users polling message-feed every 3 s instead, for
//                 BENCH_STREAM_IDLE_SECONDS (30), against the streams held as long
//   9. stories    whole escrow stories by many users for BENCH_STORY_SECONDS (scripts/lib/stories.ts)
//
// Options (environment): BENCH_CLIENTS (16), BENCH_SECONDS (10), BENCH_CONNECTIONS (32),
// BENCH_HTTP_SECONDS (8), BENCH_RELEASES (3000), BENCH_HTTP_PORT (54391), BENCH_PG_PORT (54392).
// BENCH_ONLY=reads,profile,... runs some sections (ledger, http, reads, profile, keys, creates,
// streams, stories). BENCH_BASELINE_PORT (BENCH_HTTP_PORT + 9): the reads' baseline server.
// Needs pgbench (Debian: apt-get install postgresql-client) for the ledger baseline.
import postgres from 'postgres';
import { inline } from '../shared/core/db.ts';
import { startStack, testStackEnv } from '../tests/support/stack.ts';
import { feeBreakdown, type FeeSchedule } from '../shared/escrow/fees.ts';
import {
  autocannon,
  benchPayoutAccount,
  type BenchUser,
  benchUser,
  countingProxy,
  creditWallet,
  depositEvent,
  type LoadRow,
  releasableEscrows,
  seedReader,
  servedAsBehindAGateway,
  startBaseline,
} from './lib/request-path.ts';
import { cpuOf, stackCpu } from './lib/stories.ts';
import { streamRuns } from './lib/bench-streams.ts';

const clients = Number(Deno.env.get('BENCH_CLIENTS') ?? 16);
const seconds = Number(Deno.env.get('BENCH_SECONDS') ?? 10);
const httpPort = Number(Deno.env.get('BENCH_HTTP_PORT') ?? 54391);
const pgPort = Number(Deno.env.get('BENCH_PG_PORT') ?? 54392);
const connections = Number(Deno.env.get('BENCH_CONNECTIONS') ?? 32);
const httpSeconds = Number(Deno.env.get('BENCH_HTTP_SECONDS') ?? 8);
const releases = Number(Deno.env.get('BENCH_RELEASES') ?? 3000);
const baselinePort = Number(Deno.env.get('BENCH_BASELINE_PORT') ?? httpPort + 9);
const only = new Set(
  (Deno.env.get('BENCH_ONLY') ?? 'ledger,http,reads,profile,keys,creates,streams,stories').split(',').map((x) =>
    x.trim()
  ),
);
const faults = Deno.args.includes('--faults');

interface Result {
  name: string;
  ops: number;
  seconds: number;
  latencies: number[];
  errors: number;
}

const rate = (r: Result) => r.ops / r.seconds;
function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
function show(r: Result, baseline?: number) {
  const s = [...r.latencies].sort((a, b) => a - b);
  const ratio = baseline ? `  ${(rate(r) / baseline).toFixed(2)}x baseline` : '';
  console.log(
    `  ${r.name.padEnd(34)} ${rate(r).toFixed(0).padStart(7)}/s  p50 ${pct(s, 50).toFixed(2)}ms  p95 ${
      pct(s, 95).toFixed(2)
    }ms  p99 ${pct(s, 99).toFixed(2)}ms  errors ${r.errors}${ratio}`,
  );
}

/** One call, timed; a failure is counted (the first three printed), never thrown. */
type Once = (work: () => Promise<void>) => Promise<void>;

/** Runs one loop per client, each making its calls through `once`, and times every call. */
async function measure(name: string, loops: ((once: Once) => Promise<void>)[]): Promise<Result> {
  const latencies: number[] = [];
  let ops = 0;
  let errors = 0;
  const once: Once = async (work) => {
    const t = performance.now();
    try {
      await work();
      ops++;
      latencies.push(performance.now() - t);
    } catch (err) {
      errors++;
      if (errors <= 3) console.error(`  ${name}: ${err instanceof Error ? err.message : err}`);
    }
  };
  const started = performance.now();
  await Promise.all(loops.map((loop) => loop(once)));
  return { name, ops, seconds: (performance.now() - started) / 1000, latencies, errors };
}

/** Runs `work(client, item)` on every client until its `items` are used up. */
const driveItems = <T>(name: string, items: T[][], work: (client: number, item: T) => Promise<void>) =>
  measure(
    name,
    items.map((mine, c) => async (once) => {
      for (const item of mine) await once(() => work(c, item));
    }),
  );

/** Runs `work(client, i)` in a loop on every client (or the first `n`) for `seconds`. */
function drive(name: string, work: (client: number, i: number) => Promise<void>, n = clients): Promise<Result> {
  const deadline = performance.now() + seconds * 1000;
  return measure(
    name,
    Array.from({ length: n }, (_, c) => async (once) => {
      for (let i = 0; performance.now() < deadline; i++) await once(() => work(c, i));
    }),
  );
}

async function pgbench(url: string): Promise<Result> {
  const u = new URL(url);
  const env = { PGPASSWORD: u.password };
  const common = ['-h', u.hostname, '-p', u.port, '-U', u.username];
  const init = await new Deno.Command('pgbench', {
    args: [...common, '-i', '-q', '-s', String(Math.max(1, clients)), u.pathname.slice(1)],
    env,
    stdout: 'null',
    stderr: 'piped',
  }).output();
  if (!init.success) throw new Error(`pgbench -i failed: ${new TextDecoder().decode(init.stderr)}`);
  const run = await new Deno.Command('pgbench', {
    args: [
      ...common,
      '-b',
      'tpcb-like',
      '-c',
      String(clients),
      '-j',
      '2',
      '-T',
      String(seconds),
      '-r',
      u.pathname.slice(1),
    ],
    env,
    stdout: 'piped',
    stderr: 'piped',
  }).output();
  const out = new TextDecoder().decode(run.stdout);
  const tps = Number(/tps = ([0-9.]+)/.exec(out)?.[1] ?? NaN);
  const lat = Number(/latency average = ([0-9.]+) ms/.exec(out)?.[1] ?? NaN);
  if (!run.success || Number.isNaN(tps)) {
    throw new Error(`pgbench failed: ${out}${new TextDecoder().decode(run.stderr)}`);
  }
  // pgbench reports the average only; the percentiles below are that average.
  return { name: 'pgbench tpcb-like (baseline)', ops: tps * seconds, seconds, latencies: [lat], errors: 0 };
}

if (faults) {
  // `npm run bench -- --faults`: the story load with faults injected, nothing else
  Deno.exit((await storyRuns(true)) ? 0 : 1);
}

const summary: string[] = [];
const goal = (ok: boolean) => (ok ? 'met' : 'NOT MET');

if (only.has('ledger')) {
  const found = await new Deno.Command('sh', { args: ['-c', 'command -v pgbench'], stdout: 'null' }).output();
  if (!found.success) {
    console.error(
      'error: pgbench is not installed (Debian: apt-get install postgresql-client); it measures the ledger baseline',
    );
    Deno.exit(1);
  }
}

console.log(
  `bench: ${clients} clients, ${seconds}s per run; starting a fresh stack (embedded PostgreSQL + Deno functions)`,
);
servedAsBehindAGateway();
Deno.env.set('TEST_HTTP_PORT', String(httpPort));
const stack = await startStack(httpPort, pgPort);
/** The counting proxy of the handlers run in this process (inProcess), once opened. */
type CountingProxy = ReturnType<typeof countingProxy>;
let counting: CountingProxy | undefined;
const sql = postgres(stack.databaseUrl, { max: clients, onnotice: () => {} });
try {
  if (only.has('ledger')) await ledgerRuns();
  if (only.has('http')) await moneyRuns();
  if (only.has('reads')) await readRuns();
  if (only.has('profile')) await profileRuns();
  if (only.has('keys')) await keyRuns();
  if (only.has('creates')) await createRuns();
  if (only.has('streams')) {
    await streamRuns({
      baseUrl: stack.baseUrl,
      databaseUrl: stack.databaseUrl,
      httpPort,
      pgPort,
      streamPort: httpPort + 4,
      summary,
    });
  }

  // The books still balance after all of it.
  const [check] = await sql<{ total: string; drift: string; negative: string }[]>`
    select (select sum(balance) from private.ledger_accounts) as total,
           (select count(*) from private.ledger_accounts a
             where a.balance <> coalesce((select sum(amount) from private.ledger_entries e where e.account_id = a.id), 0)) as drift,
           (select count(*) from private.ledger_accounts where kind = 'user_wallet' and balance < 0) as negative`;
  console.log(
    `\ninvariants after the run: sum of balances ${check?.total}, accounts whose balance differs from their entries ${check?.drift}, negative wallets ${check?.negative}`,
  );
  console.log('\nsummary');
  for (const line of summary) console.log(`  ${line}`);
} finally {
  counting?.close();
  await sql.end();
  await stack.stop();
}
if (only.has('stories')) {
  console.log('\nstories: whole escrow stories by many users (scripts/bench-stories.ts, a fresh stack)');
  if (!(await storyRuns(false))) Deno.exit(1);
}

async function ledgerRuns() {
  console.log('\nbaseline');
  const base = await pgbench(stack.databaseUrl);
  show(base);
  const baseline = rate(base);

  // Accounts: two funded wallets per client. Funding is itself a posting from provider clearing.
  const owners = Array.from({ length: clients * 2 }, () => crypto.randomUUID());
  const wallets: number[] = [];
  for (const owner of owners) {
    await sql`insert into private.users (id, phone, password_hash) values (${owner}, ${`+2347${
      String(Math.floor(Math.random() * 1e9)).padStart(9, '0')
    }`}, 'x')`;
    const [row] = await sql<{ id: string }[]>`select private.owner_account('user_wallet', ${owner}) as id`;
    wallets.push(Number(row?.id));
  }
  const [clearing] = await sql<
    { id: string }[]
  >`select id from private.ledger_accounts where kind = 'provider_clearing' and shard = 0`;
  const [hotFee] = await sql<
    { id: string }[]
  >`select id from private.ledger_accounts where kind = 'platform_fees' and shard = 0`;
  for (const w of wallets) {
    await sql`select private.post_transfer(${`bench-fund:${w}`}, 'bench', ${
      sql.json([{ account_id: Number(clearing?.id), amount: -1_000_000_000 }, { account_id: w, amount: 1_000_000_000 }])
    })`;
  }

  // a fee account of its own per client, for the isolated run
  const ownFees: number[] = [];
  for (let c = 0; c < clients; c++) {
    const owner = crypto.randomUUID();
    await sql`insert into private.users (id, phone, password_hash) values (${owner}, ${`+2348${
      String(Math.floor(Math.random() * 1e9)).padStart(9, '0')
    }`}, 'x')`;
    const [row] = await sql<{ id: string }[]>`select private.owner_account('user_wallet', ${owner}) as id`;
    ownFees.push(Number(row?.id));
  }
  const runId = crypto.randomUUID().slice(0, 8);
  const post = (key: string, entries: ({ account_id: number } | { system: string })[] & { amount: number }[]) =>
    sql`select private.post_transfer(${key}, 'bench', ${sql.json(entries)})`;

  console.log('\nsql: private.post_transfer, one posting per transaction');
  // Both runs post the same shape (payer -100, payee +99, fee +1); only the fee account differs:
  // each client's own in the isolated run, the one platform fee account in the shared run.
  const isolated = await drive('isolated accounts', async (c, i) => {
    await post(`${runId}:iso:${c}:${i}`, [
      { account_id: wallets[2 * c] as number, amount: -100 },
      { account_id: wallets[2 * c + 1] as number, amount: 99 },
      { account_id: ownFees[c] as number, amount: 1 },
    ]);
  });
  show(isolated, baseline);
  const shared = await drive('shared fee account (sharded)', async (c, i) => {
    await post(`${runId}:shared:${c}:${i}`, [
      { account_id: wallets[2 * c] as number, amount: -100 },
      { account_id: wallets[2 * c + 1] as number, amount: 99 },
      { system: 'platform_fees', amount: 1 },
    ]);
  });
  show(shared, baseline);
  const hot = await drive('shared fee account (one hot row)', async (c, i) => {
    await post(`${runId}:hot:${c}:${i}`, [
      { account_id: wallets[2 * c] as number, amount: -100 },
      { account_id: wallets[2 * c + 1] as number, amount: 99 },
      { account_id: Number(hotFee?.id), amount: 1 },
    ]);
  });
  show(hot, baseline);

  summary.push(
    `sql postings / tpcb-like:           ${(rate(shared) / baseline).toFixed(2)} (isolated ${
      (rate(isolated) / baseline).toFixed(2)
    }; goal >= 0.50)`,
    `shared (sharded) / isolated:        ${(rate(shared) / rate(isolated)).toFixed(2)} (goal >= 0.80)`,
    `one hot fee row / isolated:         ${(rate(hot) / rate(isolated)).toFixed(2)} (for comparison)`,
  );
}

/** Money POSTs over HTTP against the SQL function each one calls, directly over postgres.js. */
async function moneyRuns() {
  const runId = crypto.randomUUID().slice(0, 8);
  // one user with a virtual account per client: each request is a signed bank-transfer charge.success
  const depositors: BenchUser[] = [];
  for (let c = 0; c < clients; c++) depositors.push(await benchUser(stack.baseUrl, sql, 3));
  const accountNumbers: string[] = [];
  for (let c = 0; c < clients; c++) {
    const number = `88${String(c).padStart(8, '0')}`;
    await sql`insert into public.virtual_accounts (user_id, status, account_number, provider)
              values (${depositors[c]!.id}, 'active', ${number}, 'paystack')`;
    accountNumbers.push(number);
  }
  // the references are called as the service calls them: values as literals, so postgres.js sends
  // no Describe first (docs/performance.md); a parameterised call would be a round trip slower
  console.log('\nmoney: private.bank_transfer_received called directly, one posting per transaction');
  const direct = await drive('bank_transfer_received (sql)', async (c, i) => {
    await inline(sql)`select private.bank_transfer_received(${
      depositors[c]!.id
    }, 50000, 'paystack', ${`${runId}-sql-${c}-${i}`},
                                                   '{"sender_name":null,"provider_reference":null}'::jsonb)`;
  });
  show(direct);
  console.log('http: webhook-payments (signed charge.success into a virtual account), one posting per request');
  const url = `${stack.baseUrl}/webhook-payments`;
  let seq = 0;
  const http = await drive('webhook-payments deposits', async (c) => {
    const event = await depositEvent(accountNumbers[c] as string, `${runId}-${++seq}`);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-payments-signature': event.signature },
      body: event.body,
    });
    await res.body?.cancel();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  });
  show(http, rate(direct));

  // escrow-release: one payer and one payee per client, escrows funded, accepted and delivered; the
  // payees at tier 1, past the identity floor (below it a release is held and the payee told)
  console.log(`\nmoney: escrow-release, ${releases} releases each way (${clients} clients; setting up...)`);
  const pairs: { payer: BenchUser; payee: BenchUser }[] = [];
  for (let c = 0; c < clients; c++) {
    pairs.push({ payer: await benchUser(stack.baseUrl, sql, 4), payee: await benchUser(stack.baseUrl, sql, 1) });
  }
  const per = Math.ceil(releases / clients);
  const sqlIds: string[][] = [];
  const httpIds: string[][] = [];
  await Promise.all(pairs.map(async (p, c) => {
    const ids = await releasableEscrows(sql, p.payer, p.payee, 2 * per, 1);
    sqlIds[c] = ids.slice(0, per);
    httpIds[c] = ids.slice(per);
  }));
  const releaseSql = await driveItems('escrow_release (sql)', sqlIds, async (c, id) => {
    await inline(sql)`select payout_tx from private.escrow_release(${id}, ${pairs[c]!.payer.id}, now())`;
  });
  show(releaseSql);
  const releaseHttp = await driveItems('escrow-release (http)', httpIds, async (c, id) => {
    const res = await fetch(`${stack.baseUrl}/escrow-release`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${pairs[c]!.payer.token}` },
      body: JSON.stringify({ escrow_id: id }),
    });
    await res.body?.cancel();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  });
  show(releaseHttp, rate(releaseSql));
  const deposits = rate(http) / rate(direct);
  const released = rate(releaseHttp) / rate(releaseSql);
  summary.push(
    `webhook-payments / its SQL function: ${deposits.toFixed(2)} (goal >= 0.50: ${goal(deposits >= 0.5)})`,
    `escrow-release / its SQL function:   ${released.toFixed(2)} (goal >= 0.50: ${goal(released >= 0.5)})`,
  );
}

/** Authenticated GETs with autocannon, side by side with the baselines, in one run. */
async function readRuns() {
  const baseline = await startBaseline(baselinePort, stack.databaseUrl, 10);
  try {
    const reader = await seedReader(stack.baseUrl, sql);
    const auth = { authorization: `Bearer ${reader.token}` };
    console.log(
      `\nreads: autocannon, ${connections} connections, ${httpSeconds}s each; ratios to Deno + one query`,
    );
    // where each request's CPU goes: the server that answers it (the baseline's or the functions
    // server) and Postgres, in microseconds a request
    const { postgres: pgCpu, 'functions server': fnCpu } = stackCpu({ serverPid: stack.serverPid }, pgPort);
    const baseCpu = { server: () => cpuOf(baseline.pid), postgres: pgCpu };
    const ourCpu = { server: fnCpu, postgres: pgCpu };
    const load = (name: string, url: string, cpu: Record<string, () => number>, headers?: Record<string, string>) =>
      autocannon(name, url, { connections, seconds: httpSeconds, headers, cpu });
    const rows: LoadRow[] = [
      await load('bare Deno.serve JSON', `${baseline.url}/bare`, baseCpu),
      await load('Deno + one postgres.js query', `${baseline.url}/one-query`, baseCpu),
      await load('Deno + tx, set_config, query', `${baseline.url}/tx-query`, baseCpu),
    ];
    const reference = rows[1] as LoadRow;
    const reads = [
      ['GET wallet-get', 'wallet-get'],
      ['GET escrow-list?limit=20', 'escrow-list?limit=20'],
      ['GET profile-get', 'profile-get'],
      ['GET transaction-list?limit=20', 'transaction-list?limit=20'],
      ['GET message-feed (20 items)', `message-feed?conversation_id=${reader.conversation}&limit=20`],
    ];
    for (const [name, path] of reads) rows.push(await load(name as string, `${stack.baseUrl}/${path}`, ourCpu, auth));
    for (const r of rows) {
      const cpu = r.cpuPerRequest;
      console.log(
        `  ${r.name.padEnd(32)} ${
          r.rps.toFixed(0).padStart(7)
        }/s  p50 ${r.p50}ms  p99 ${r.p99}ms  non-2xx ${r.non2xx}  errors ${r.errors}  ${
          (r.rps / reference.rps).toFixed(2)
        }x  p99 ${(r.p99 / Math.max(1, reference.p99)).toFixed(1)}x  CPU/request: server ${
          (cpu.server ?? 0).toFixed(0)
        } µs, postgres ${(cpu.postgres ?? 0).toFixed(0)} µs`,
      );
    }
    for (const r of rows.slice(3)) {
      const ratio = r.rps / reference.rps;
      const p99 = r.p99 / Math.max(1, reference.p99);
      summary.push(
        `${r.name.padEnd(30)} ${ratio.toFixed(2)}x, p99 ${p99.toFixed(1)}x (goal >= 0.33x, p99 <= 4x: ${
          goal(ratio >= 0.33 && p99 <= 4 && r.non2xx === 0 && r.errors === 0)
        })`,
      );
    }
  } finally {
    await baseline.stop();
  }
}

/**
 * The handlers run in this process (profile, keys) reach Postgres through one counting proxy,
 * opened on first use and closed at the end: the configuration, DATABASE_URL included, is read
 * once per process.
 */
function inProcess(): CountingProxy {
  if (counting) return counting;
  const proxyPort = httpPort + 8;
  counting = countingProxy(proxyPort, pgPort);
  for (const [k, v] of Object.entries(testStackEnv(httpPort, pgPort))) Deno.env.set(k, v);
  Deno.env.set('DATABASE_URL', `postgres://postgres:postgres@127.0.0.1:${proxyPort}/postgres`);
  Deno.env.set('ESCROW_LOCAL_STACK', '1');
  return counting;
}

/**
 * What one request sends to Postgres: the handlers run in this process against a counting proxy
 * (scripts/lib/request-path.ts), one request at a time, after a warm-up.
 */
async function profileRuns() {
  const proxy = inProcess();
  const reader = await seedReader(stack.baseUrl, sql);
  const payer = await benchUser(stack.baseUrl, sql, 4);
  const payee = await benchUser(stack.baseUrl, sql, 1);
  const escrows = await releasableEscrows(sql, payer, payee, 40, 1);
  await creditWallet(sql, payer.id, 1);
  // BENCH_PROFILE_ROOT: another checkout's handlers (the figures before a change), same database
  const checkout = Deno.env.get('BENCH_PROFILE_ROOT');
  const fns = checkout ? new URL(`file://${checkout.replace(/\/$/, '')}/supabase/functions/`) : new URL(
    '../supabase/functions/',
    import.meta.url,
  );
  const handler = async (name: string) => (await import(new URL(`${name}/handler.ts`, fns).href)).default;
  const n = 20;
  console.log(`\nprofile: what one request sends to Postgres (mean of ${n}, one at a time)`);
  const measure = async (label: string, name: string, request: (i: number) => Request) => {
    const h = await handler(name);
    for (let i = 0; i < 3; i++) await (await h(request(n + i))).text(); // warm the pool
    proxy.reset();
    const print = console.log; // the handlers' own log lines would bury the figures
    console.log = () => {};
    try {
      for (let i = 0; i < n; i++) {
        const res: Response = await h(request(i));
        if (res.status !== 200) throw new Error(`${label}: ${res.status} ${await res.text()}`);
      }
    } finally {
      console.log = print;
    }
    console.log(
      `  ${label.padEnd(32)} statements ${(proxy.counts.statements / n).toFixed(1).padStart(5)}  round trips ${
        (proxy.counts.roundTrips / n).toFixed(1).padStart(5)
      }`,
    );
  };
  const get = (path: string) => () =>
    new Request(`http://127.0.0.1/functions/v1/${path}`, { headers: { authorization: `Bearer ${reader.token}` } });
  await measure('GET wallet-get', 'wallet-get', get('wallet-get'));
  await measure('GET escrow-list?limit=20', 'escrow-list', get('escrow-list?limit=20'));
  await measure('GET profile-get', 'profile-get', get('profile-get'));
  await measure('GET transaction-list?limit=20', 'transaction-list', get('transaction-list?limit=20'));
  await measure(
    'GET message-feed',
    'message-feed',
    get(`message-feed?conversation_id=${reader.conversation}&limit=20`),
  );
  const [account] = await sql<{ n: string }[]>`
    insert into public.virtual_accounts (user_id, status, account_number, provider)
    values (${reader.id}, 'active', '8899999999', 'paystack') returning account_number as n`;
  const events = await Promise.all(
    Array.from({ length: n + 3 }, (_, i) => depositEvent(account?.n as string, `profile-${crypto.randomUUID()}-${i}`)),
  );
  await measure('POST webhook-payments (deposit)', 'webhook-payments', (i) => {
    const e = events[i % events.length]!;
    return new Request('http://127.0.0.1/functions/v1/webhook-payments', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payments-signature': e.signature },
      body: e.body,
    });
  });
  await measure(
    'POST escrow-release',
    'escrow-release',
    (i) =>
      new Request('http://127.0.0.1/functions/v1/escrow-release', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${payer.token}` },
        body: JSON.stringify({ escrow_id: escrows[i % escrows.length] }),
      }),
  );
  const { closeDb } = await import(new URL('../../shared/core/db.ts', fns).href);
  await closeDb();
}

/**
 * Idempotent POSTs with an Idempotency-Key: what one sends to Postgres (this checkout's handlers
 * and, with BENCH_PROFILE_BEFORE, another checkout's, in this run, on this database), then each
 * over HTTP on the real server against its SQL function called directly.
 */
async function keyRuns() {
  const proxy = inProcess();
  const n = 20;
  const payer = await benchUser(stack.baseUrl, sql, 4);
  const payee = await benchUser(stack.baseUrl, sql, 1);
  const withdrawer = await benchUser(stack.baseUrl, sql, 4);
  await creditWallet(sql, withdrawer.id, 100_000_000);
  const account = await benchPayoutAccount(stack.baseUrl, stack.fakePaystackUrl, withdrawer);
  const before = Deno.env.get('BENCH_PROFILE_BEFORE');
  const checkouts: [string, URL][] = [['after', new URL('../', import.meta.url)]];
  // BENCH_KEYS_AFTER_FIRST=1 measures this checkout first (what running second costs, shown)
  const other: [string, URL] = ['before', new URL(`file://${before?.replace(/\/$/, '')}/`)];
  if (before) Deno.env.get('BENCH_KEYS_AFTER_FIRST') ? checkouts.push(other) : checkouts.unshift(other);

  const post = (name: string, token: string, body: unknown) =>
    new Request(`http://127.0.0.1/functions/v1/${name}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify(body),
    });
  const createBody = (i: number) => ({
    category: 'goods_products',
    payer_role: 'initiator',
    title: `Key bench ${i}`,
    counterparty_phone: payee.phone,
    amount: 100_000,
  });
  console.log(`\nkeys: what one idempotent POST sends to Postgres, with a new Idempotency-Key each (mean of ${n})`);
  const figures = new Map<string, Map<string, { statements: number; roundTrips: number }>>();
  for (const [label, root] of checkouts) {
    const escrows = await releasableEscrows(sql, payer, payee, n + 3, 1);
    const ops: [string, (i: number) => Request][] = [
      ['escrow-create', (i) => post('escrow-create', payer.token, createBody(i))],
      ['escrow-release', (i) => post('escrow-release', payer.token, { escrow_id: escrows[i] })],
      ['wallet-withdraw', () => post('wallet-withdraw', withdrawer.token, { amount: 100, payout_account_id: account })],
    ];
    for (const [name, request] of ops) {
      const h = (await import(new URL(`supabase/functions/${name}/handler.ts`, root).href)).default;
      const print = console.log; // the handlers' own log lines would bury the figures
      console.log = () => {};
      try {
        for (let i = 0; i < 3; i++) await (await h(request(n + i))).text(); // warm the pool
        proxy.reset();
        for (let i = 0; i < n; i++) {
          const res: Response = await h(request(i));
          const text = await res.text();
          if (res.status >= 300) throw new Error(`${label} ${name}: ${res.status} ${text}`);
        }
      } finally {
        console.log = print;
      }
      const row = figures.get(name) ?? new Map();
      row.set(label, { statements: proxy.counts.statements / n, roundTrips: proxy.counts.roundTrips / n });
      figures.set(name, row);
    }
  }
  for (const [name, row] of figures) {
    const cells = [...row].map(([label, f]) =>
      `${label}: statements ${f.statements.toFixed(1).padStart(5)}  round trips ${f.roundTrips.toFixed(1).padStart(5)}`
    );
    console.log(`  POST ${name.padEnd(16)} ${cells.join('   ')}`);
    const b = row.get('before');
    const a = row.get('after')!;
    if (b) {
      const fewer = b.roundTrips - a.roundTrips;
      const provider = name === 'wallet-withdraw';
      summary.push(
        `${name} round trips with a key: ${b.roundTrips.toFixed(1)} -> ${a.roundTrips.toFixed(1)}${
          provider ? ' (calls a provider)' : ` (goal: at least 2 fewer: ${goal(fewer >= 2)})`
        }`,
      );
    }
  }

  // over HTTP on the real server, against the SQL function called directly
  console.log(`\nkeys: over HTTP with an Idempotency-Key each, against the SQL function called directly`);
  const [schedule] = await sql<FeeSchedule[]>`
    select fee_bps, min_fee::int, max_fee::int, payer_share_bps, vat_bps from private.fee_schedules where category = 'goods_products'`;
  const fees = feeBreakdown(100_000, schedule as FeeSchedule);
  const viaHttp = (name: string, token: string, body: () => unknown, base = stack.baseUrl) => async () => {
    const res = await fetch(`${base}/${name}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify(body()),
    });
    await res.body?.cancel();
    if (res.status >= 300) throw new Error(`${name}: HTTP ${res.status}`);
  };
  let seq = 0;
  const createSql = await drive('escrow_create (sql)', async () => {
    await inline(
      sql,
    )`select * from private.escrow_create(${payer.id}, 'goods_products', 'initiator', ${`Key bench sql ${++seq}`},
      '', ${payee.phone}, 100000, ${fees.payer_fee}, ${fees.vat}, ${fees.seller_fee}, ${crypto.randomUUID()})`;
  });
  show(createSql);
  const createHttp = await drive(
    'escrow-create (http, key)',
    viaHttp('escrow-create', payer.token, () => createBody(++seq)),
  );
  show(createHttp, rate(createSql));

  const per = Math.max(1, Math.ceil(releases / clients / 4));
  const pairs = await Promise.all(
    Array.from({ length: clients }, async () => ({
      payer: await benchUser(stack.baseUrl, sql, 4),
      payee: await benchUser(stack.baseUrl, sql, 1),
    })),
  );
  const ids = await Promise.all(pairs.map((p) => releasableEscrows(sql, p.payer, p.payee, 2 * per, 1)));
  const releaseSql = await driveItems('escrow_release (sql)', ids.map((x) => x.slice(0, per)), async (c, id) => {
    await inline(sql)`select payout_tx from private.escrow_release(${id}, ${pairs[c]!.payer.id}, now())`;
  });
  show(releaseSql);
  const releaseHttp = await driveItems(
    'escrow-release (http, key)',
    ids.map((x) => x.slice(per)),
    (c, id) => viaHttp('escrow-release', pairs[c]!.payer.token, () => ({ escrow_id: id }))(),
  );
  show(releaseHttp, rate(releaseSql));

  const withdrawSql = await drive('withdrawal_create (sql)', async () => {
    await inline(sql)`select private.withdrawal_create(${withdrawer.id}, 10000, ${account}, 'paystack')`;
  });
  show(withdrawSql);
  const withdrawHttp = await drive(
    'wallet-withdraw (http, key)',
    viaHttp('wallet-withdraw', withdrawer.token, () => ({ amount: 100, payout_account_id: account })),
  );
  show(withdrawHttp, rate(withdrawSql));
  for (
    const [label, http, direct] of [
      ['escrow-create', createHttp, createSql],
      ['escrow-release', releaseHttp, releaseSql],
      ['wallet-withdraw', withdrawHttp, withdrawSql],
    ] as const
  ) {
    summary.push(`${label} with a key / its SQL function: ${(rate(http) / rate(direct)).toFixed(2)}`);
  }

  // before and after in this run: each checkout's handlers served from this process, the same way
  if (before) {
    console.log(
      `\nkeys: each checkout's handlers served from this process alike, a key each (ratios to the SQL above)`,
    );
    const ratios = new Map<string, string[]>();
    for (const [i, [label, root]] of checkouts.entries()) {
      const handlers = new Map<string, (req: Request) => Promise<Response>>();
      for (const name of ['escrow-create', 'escrow-release', 'wallet-withdraw']) {
        handlers.set(name, (await import(new URL(`supabase/functions/${name}/handler.ts`, root).href)).default);
      }
      const port = httpPort + 5 + i;
      const server = Deno.serve({ port, hostname: '127.0.0.1', onListen() {} }, (req) => {
        const handler = handlers.get(new URL(req.url).pathname.split('/').pop() ?? '');
        return handler ? handler(req) : new Response('not found', { status: 404 });
      });
      const base = `http://127.0.0.1:${port}/functions/v1`;
      try {
        const created = await drive(
          `escrow-create (${label})`,
          viaHttp('escrow-create', payer.token, () => createBody(++seq), base),
        );
        show(created, rate(createSql));
        const ids = await Promise.all(pairs.map((p) => releasableEscrows(sql, p.payer, p.payee, per, 1)));
        const released = await driveItems(
          `escrow-release (${label})`,
          ids,
          (c, id) => viaHttp('escrow-release', pairs[c]!.payer.token, () => ({ escrow_id: id }), base)(),
        );
        show(released, rate(releaseSql));
        const withdrawn = await drive(
          `wallet-withdraw (${label})`,
          viaHttp('wallet-withdraw', withdrawer.token, () => ({ amount: 100, payout_account_id: account }), base),
        );
        show(withdrawn, rate(withdrawSql));
        for (
          const [name, r, direct] of [
            ['escrow-create', created, createSql],
            ['escrow-release', released, releaseSql],
            ['wallet-withdraw', withdrawn, withdrawSql],
          ] as const
        ) {
          ratios.set(name, [...(ratios.get(name) ?? []), `${label} ${(rate(r) / rate(direct)).toFixed(2)}`]);
        }
      } finally {
        await server.shutdown();
        const { closeDb } = await import(new URL('shared/core/db.ts', root).href);
        await closeDb();
      }
    }
    for (const [name, cells] of ratios) {
      summary.push(`${name} served in-process, with a key / its SQL function: ${cells.join(', ')}`);
    }
  }
}

/**
 * Escrow creations, one creator against many, calling private.escrow_create directly: first with
 * the trigger that made every creation wait for the table's lock (put back for this measure, the
 * code before), then without it (the code now); then the creators over HTTP against the direct
 * figure.
 */
async function createRuns() {
  const [schedule] = await sql<FeeSchedule[]>`
    select fee_bps, min_fee::int, max_fee::int, payer_share_bps, vat_bps from private.fee_schedules where category = 'goods_products'`;
  const fees = feeBreakdown(100_000, schedule as FeeSchedule);
  const creators = await Promise.all(Array.from({ length: clients }, () => benchUser(stack.baseUrl, sql, 0)));
  const other = await benchUser(stack.baseUrl, sql, 0);
  let seq = 0;
  const direct = async (c: number) => {
    await inline(sql)`select escrow_id from private.escrow_create(${creators[c]!.id}, 'goods_products', 'initiator',
      ${`Create bench ${++seq}`}, '', ${other.phone}, 100000, ${fees.payer_fee}, ${fees.vat}, ${fees.seller_fee},
      ${crypto.randomUUID()})`;
  };
  console.log(`\ncreates: private.escrow_create called directly, 1 creator and ${clients} creators`);
  const ratios: string[] = [];
  let many: Result | undefined;
  let scaling = 0;
  try {
    for (const lock of [true, false]) {
      const label = lock ? 'with the table-wide lock (before)' : 'without it (now)';
      await sql.unsafe('drop trigger if exists escrows_created_at_increasing on public.escrows');
      if (lock) {
        await sql.unsafe(`create trigger escrows_created_at_increasing before insert on public.escrows
                          for each row execute function private.strictly_increasing_created_at_global()`);
      }
      const one = await drive(`1 creator, ${label}`, (c) => direct(c), 1);
      show(one);
      many = await drive(`${clients} creators, ${label}`, (c) => direct(c));
      show(many, rate(one));
      scaling = rate(many) / rate(one);
      ratios.push(`${lock ? 'before' : 'now'} ${scaling.toFixed(2)}x`);
    }
  } finally {
    await sql.unsafe('drop trigger if exists escrows_created_at_increasing on public.escrows');
  }
  const http = await drive(`${clients} creators over HTTP`, async (c) => {
    const res = await fetch(`${stack.baseUrl}/escrow-create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${creators[c]!.token}` },
      body: JSON.stringify({
        category: 'goods_products',
        payer_role: 'initiator',
        title: `Create bench ${++seq}`,
        counterparty_phone: other.phone,
        amount: 1000,
      }),
    });
    await res.body?.cancel();
    if (res.status !== 201) throw new Error(`HTTP ${res.status}`);
  });
  show(http, rate(many!));
  const overHttp = rate(http) / rate(many!);
  summary.push(
    `escrow_create, ${clients} creators / 1 creator: ${ratios.join(', ')} (goal >= 2x: ${goal(scaling >= 2)})`,
    `escrow-create over HTTP / escrow_create directly, ${clients} creators each: ${
      overHttp.toFixed(2)
    } (goal >= 0.50: ${goal(overHttp >= 0.5)})`,
  );
}

/**
 * Whole escrow stories on a fresh stack of their own (scripts/bench-stories.ts), after the rest has
 * stopped, so the two never share the machine; with --faults, only they run, with the faults.
 */
async function storyRuns(withFaults: boolean): Promise<boolean> {
  const run = await new Deno.Command(Deno.execPath(), {
    args: ['run', '--allow-all', 'scripts/bench-stories.ts', ...(withFaults ? ['--faults'] : [])],
    cwd: new URL('../', import.meta.url).pathname,
    stdout: 'inherit',
    stderr: 'inherit',
  }).output();
  return run.success;
}
