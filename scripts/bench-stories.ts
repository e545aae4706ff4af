// Whole escrow stories under load (scripts/lib/stories.ts), on a fresh stack of their own:
//
//   deno run --allow-all scripts/bench-stories.ts [--faults]
//
// BENCH_STORY_STATEMENTS=1 prints the statements Postgres spent its time on (pg_stat_statements,
// loaded at start for the run: execution and planning time, calls).
// BENCH_STORY_FUNCTIONS=1 also prints where Postgres spent its time: the SQL functions by their
// own time (pg_stat_user_functions, track_functions = 'pl' for the run).
//
// Options (environment): BENCH_STORY_USERS (32), BENCH_STORY_SECONDS (60; at least 50 with
// --faults), BENCH_STORY_CARD_SHARE (0.25), BENCH_FAULTS (with --faults: which ones,
// comma-separated; default all: webhooks,postgres,provider-500,provider-timeout), BENCH_HTTP_PORT
// (54591; the Paystack fake takes + 2, the KYC fake + 3), BENCH_PG_PORT (54592).
//
// Exits 1 when the run did not pass (storiesPassed): anything unexpected, an answer that was a
// 500 or none at all, a broken invariant, something lost or doubled, or (with --faults) a payment
// still pending after reconciliation.
import postgres from 'postgres';
import { startStack, TEST_JOBS_SECRET } from '../tests/support/stack.ts';
import {
  FAULT_KINDS,
  type FaultKind,
  printStoryReport,
  runStories,
  stackCpu,
  stackFaults,
  storiesPassed,
} from './lib/stories.ts';
import { servedAsBehindAGateway } from './lib/request-path.ts';

const faults = Deno.args.includes('--faults');
const faultKinds = (Deno.env.get('BENCH_FAULTS') ?? FAULT_KINDS.join(',')).split(',').filter(Boolean) as FaultKind[];
for (const k of faultKinds) {
  if (!(FAULT_KINDS as readonly string[]).includes(k)) {
    console.error(`error: BENCH_FAULTS: unknown fault '${k}' (known: ${FAULT_KINDS.join(', ')})`);
    Deno.exit(2);
  }
}
const users = Number(Deno.env.get('BENCH_STORY_USERS') ?? 32);
const seconds = Number(Deno.env.get('BENCH_STORY_SECONDS') ?? 60);
const cardShare = Number(Deno.env.get('BENCH_STORY_CARD_SHARE') ?? 0.25);
const httpPort = Number(Deno.env.get('BENCH_HTTP_PORT') ?? 54591);
const pgPort = Number(Deno.env.get('BENCH_PG_PORT') ?? 54592);

console.log(
  `bench-stories: ${users} users, ${seconds} s${
    faults ? ', faults' : ''
  }; starting a fresh stack on ${httpPort}/${pgPort}`,
);
Deno.env.set('TEST_HTTP_PORT', String(httpPort));
servedAsBehindAGateway();
const statementStats = Deno.env.get('BENCH_STORY_STATEMENTS') === '1';
if (statementStats) Deno.env.set('LOCAL_PG_PRELOAD', 'pg_stat_statements');
const stack = await startStack(httpPort, pgPort);
const controls = faults ? stackFaults(stack, pgPort) : undefined;
const functionStats = Deno.env.get('BENCH_STORY_FUNCTIONS') === '1';
const admin = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
if (functionStats) {
  await admin`alter system set track_functions = 'pl'`;
  await admin`select pg_reload_conf()`;
  await admin`select pg_stat_reset()`;
}
if (statementStats) {
  await admin`create extension if not exists pg_stat_statements`;
  await admin`select pg_stat_statements_reset()`;
}
let passed = false;
try {
  const report = await runStories({
    baseUrl: stack.baseUrl,
    databaseUrl: stack.databaseUrl,
    fakePaystackUrl: stack.fakePaystackUrl,
    jobsSecret: TEST_JOBS_SECRET,
    seconds,
    users,
    cardShare,
    faults: controls,
    faultKinds,
    cpu: stackCpu(stack, pgPort),
    log: (line) => console.log(line),
  });
  printStoryReport(report);
  if (functionStats) {
    const rows = await admin<{ name: string; calls: string; self_ms: string; total_ms: string }[]>`
      select schemaname || '.' || funcname as name, calls::text, round(self_time)::text as self_ms,
             round(total_time)::text as total_ms
        from pg_stat_user_functions order by self_time desc limit 15`;
    console.log('\nwhere Postgres spent its time: SQL functions by own time (ms), calls, total with callees');
    for (const r of rows) {
      console.log(
        `  ${r.name.padEnd(44)} self ${r.self_ms.padStart(7)}  calls ${r.calls.padStart(7)}  total ${r.total_ms}`,
      );
    }
    await admin`alter system reset track_functions`;
    await admin`select pg_reload_conf()`;
  }
  if (statementStats) {
    const rows = await admin<{ query: string; calls: string; exec_ms: string; plan_ms: string; per_call: string }[]>`
      select regexp_replace(query, '[[:space:]]+', ' ', 'g') as query, calls::text, round(total_exec_time)::text as exec_ms,
             round(total_plan_time)::text as plan_ms,
             round(((total_exec_time + total_plan_time) / calls * 1000)::numeric)::text as per_call
        from pg_stat_statements where calls > 0 order by total_exec_time + total_plan_time desc limit 20`;
    console.log('\nwhere Postgres spent its time: statements by execution and planning time (ms), µs a call');
    for (const r of rows) {
      console.log(
        `  exec ${r.exec_ms.padStart(6)}  plan ${r.plan_ms.padStart(5)}  calls ${r.calls.padStart(6)}  ${
          r.per_call.padStart(6)
        } µs  ${r.query.slice(0, 150)}`,
      );
    }
  }
  passed = storiesPassed(report);
  console.log(`\n${passed ? 'PASS' : 'FAIL'}; the server's log: ${stack.logFile}`);
} finally {
  await admin.end();
  await controls?.cleanup();
  await stack.stop();
}
if (!passed) Deno.exit(1);
