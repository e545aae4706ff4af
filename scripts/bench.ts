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
//                 webhook-payments on the real Deno server: one posting per request
//
// Options (environment): BENCH_CLIENTS (16), BENCH_SECONDS (10), BENCH_HTTP_PORT (54391),
// BENCH_PG_PORT (54392). Needs pgbench (Debian: apt-get install postgresql-client).
import postgres from 'postgres';
import { signPayload } from '../shared/payments/signature.ts';
import { startStack, TEST_PAYMENTS_WEBHOOK_SECRET } from '../tests/support/stack.ts';

const clients = Number(Deno.env.get('BENCH_CLIENTS') ?? 16);
const seconds = Number(Deno.env.get('BENCH_SECONDS') ?? 10);
const httpPort = Number(Deno.env.get('BENCH_HTTP_PORT') ?? 54391);
const pgPort = Number(Deno.env.get('BENCH_PG_PORT') ?? 54392);

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

/** Runs `work(client)` in a loop on every client for `seconds`, timing each call. */
async function drive(name: string, work: (client: number, i: number) => Promise<void>): Promise<Result> {
  const latencies: number[] = [];
  let ops = 0;
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t = performance.now();
        try {
          await work(c, i);
          ops++;
          latencies.push(performance.now() - t);
        } catch (err) {
          errors++;
          if (errors <= 3) console.error(`  ${name}: ${err instanceof Error ? err.message : err}`);
        }
      }
    }),
  );
  return { name, ops, seconds: (performance.now() - started) / 1000, latencies, errors };
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

if (!(await new Deno.Command('sh', { args: ['-c', 'command -v pgbench'], stdout: 'null' }).output()).success) {
  console.error(
    'error: pgbench is not installed (Debian: apt-get install postgresql-client); it measures the baseline',
  );
  Deno.exit(1);
}

console.log(
  `bench: ${clients} clients, ${seconds}s per run; starting a fresh stack (embedded PostgreSQL + Deno functions)`,
);
Deno.env.set('TEST_HTTP_PORT', String(httpPort));
const stack = await startStack(httpPort, pgPort);
const sql = postgres(stack.databaseUrl, { max: clients, onnotice: () => {} });
try {
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

  // HTTP: one virtual account per client; each request is a signed bank-transfer charge.success.
  const accountNumbers: string[] = [];
  for (let c = 0; c < clients; c++) {
    const number = `88${String(c).padStart(8, '0')}`;
    await sql`insert into public.virtual_accounts (user_id, status, account_number, provider) values (${owners[
      c
    ] as string}, 'active', ${number}, 'paystack')`;
    accountNumbers.push(number);
  }
  console.log('\nhttp: webhook-payments (signed charge.success into a virtual account), one posting per request');
  const url = `${stack.baseUrl}/webhook-payments`;
  let seq = 0;
  const http = await drive('webhook-payments deposits', async (c) => {
    const id = `${runId}-${++seq}`;
    const body = JSON.stringify({
      event: 'charge.success',
      data: {
        id,
        status: 'success',
        reference: `ref-${id}`,
        amount: 50_000,
        channel: 'dedicated_nuban',
        authorization: { receiver_bank_account_number: accountNumbers[c] },
      },
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'x-payments-signature': await signPayload(TEST_PAYMENTS_WEBHOOK_SECRET, body),
      },
      body,
    });
    await res.body?.cancel();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  });
  show(http, baseline);

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
  console.log(
    `  sql postings / tpcb-like:           ${(rate(shared) / baseline).toFixed(2)} (isolated ${
      (rate(isolated) / baseline).toFixed(2)
    }; goal >= 0.50)`,
  );
  console.log(`  shared (sharded) / isolated:        ${(rate(shared) / rate(isolated)).toFixed(2)} (goal >= 0.80)`);
  console.log(`  one hot fee row / isolated:         ${(rate(hot) / rate(isolated)).toFixed(2)} (for comparison)`);
  console.log(`  http postings / tpcb-like:          ${(rate(http) / baseline).toFixed(2)}`);
} finally {
  await sql.end();
  await stack.stop();
}
