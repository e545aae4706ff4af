// `npm test`: everything CI checks, with a line of progress per step.
//   1. deno fmt --check and deno lint (configured in deno.json)
//   2. tsc --noEmit (strict) over shared/, handlers and tests
//   3. deno check of every function entry and every script
//   4. deploy check: each function from the files the supabase CLI uploads, without node_modules
//   4b. generated files: `npm run gen -- --check` (index.ts, config.toml blocks, README tables, the
//       operation map, the OpenAPI document, the client, the state and notification docs, schema.sql)
//   5. the real stack (embedded Postgres + Deno functions server) on test ports, fresh data
//   6. vitest: unit, integration and end-to-end suites against that stack
//   7. supabase db advisors (security and performance) against the test database: zero findings
// Ends with one line "N passed, N failed" (vitest tests plus the other steps).
import postgres from 'postgres';
import { startStack } from '../tests/support/stack.ts';

const root = new URL('../', import.meta.url).pathname;
const bin = (name: string) => `${root}node_modules/.bin/${name}`;
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;

async function run(label: string, cmd: string, args: string[], env: Record<string, string> = {}): Promise<boolean> {
  console.log(`\n▶ ${label}`);
  const child = new Deno.Command(cmd, { args, cwd: root, env, stdout: 'inherit', stderr: 'inherit' }).spawn();
  const { code } = await child.status;
  console.log(`${code === 0 ? '✔' : '✘'} ${label} (${elapsed()})`);
  return code === 0;
}

async function functionEntries(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${root}supabase/functions`)) {
    if (e.isDirectory) out.push(`supabase/functions/${e.name}/index.ts`);
  }
  return out.sort();
}

const steps: { name: string; ok: boolean }[] = [];
let vitestPassed = 0;
let vitestFailed = 0;

steps.push({
  name: 'format',
  ok: await run('format (deno fmt --check; `npm run fmt` fixes it)', bin('deno'), ['fmt', '--check']),
});
steps.push({ name: 'lint', ok: await run('lint (deno lint)', bin('deno'), ['lint']) });
steps.push({
  name: 'typecheck',
  ok: await run('type check (tsc --noEmit)', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']),
});
steps.push({
  name: 'deno check',
  ok: await run('deno check (every function entry and script)', bin('deno'), [
    'check',
    ...(await functionEntries()),
    'scripts/start.ts',
    'scripts/test.ts',
    'tests/fakes/paystack.ts',
    'scripts/bench.ts',
    'scripts/bench-abuse.ts',
    'scripts/bench-stories.ts',
    'scripts/gen-escrow-states.ts',
    'scripts/gen.ts',
    'scripts/gen-schema.ts',
    'scripts/deploy-check.ts',
    'scripts/sms-code.ts',
    'scripts/smoke.ts',
  ]),
});
steps.push({
  name: 'deploy check',
  ok: await run('deploy check (each function from the files the supabase CLI uploads, no node_modules)', bin('deno'), [
    'run',
    '--allow-all',
    'scripts/deploy-check.ts',
  ]),
});

steps.push({
  name: 'generated files',
  ok: await run('generated files (npm run gen -- --check: each one what its source makes)', bin('deno'), [
    'run',
    '--allow-all',
    'scripts/gen.ts',
    '--check',
  ]),
});

console.log('\n▶ starting the test stack (embedded PostgreSQL + Deno functions server)');
const stack = await startStack();
console.log(`✔ stack up at ${stack.baseUrl} (${elapsed()}); server log: ${stack.logFile}`);
try {
  // With sequential scans off, the planner uses an index whenever one fits, so the advisors'
  // "unused index" check afterwards means what it should: no query the suite runs uses it.
  const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  await sql`alter database postgres set enable_seqscan = off`;
  await sql.end();

  const report = `${root}.data/vitest-report-${new URL(stack.baseUrl).port}.json`;
  const statusLog = `${root}.data/answer-statuses-${new URL(stack.baseUrl).port}.log`;
  await Deno.remove(statusLog).catch(() => {});
  const ok = await run(
    'vitest (unit, integration, e2e against the running stack)',
    bin('vitest'),
    ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...Deno.args],
    {
      TEST_BASE_URL: stack.baseUrl,
      TEST_DATABASE_URL: stack.databaseUrl,
      TEST_FAKE_PAYSTACK_URL: stack.fakePaystackUrl,
      TEST_FAKE_KYC_URL: stack.fakeKycUrl,
      TEST_SERVER_LOG: stack.logFile,
      ANSWER_STATUS_LOG: statusLog,
    },
  );
  try {
    const r = JSON.parse(await Deno.readTextFile(report));
    vitestPassed = r.numPassedTests ?? 0;
    vitestFailed = (r.numFailedTests ?? 0) + (ok ? 0 : r.numFailedTests ? 0 : 1);
  } catch {
    vitestFailed += ok ? 0 : 1;
  }
  steps.push({ name: 'vitest', ok });

  // Only a whole run can tell that no test produced a refusal (a filtered run sees a part).
  if (Deno.args.length === 0) {
    console.log('\n▶ declared refusals (each one some test received from the real server)');
    const { loadFunctions } = await import('./lib/server.ts');
    const { seenRefusals, unseenRefusals } = await import('./lib/refusal-coverage.ts');
    const metas = [...(await loadFunctions()).values()].map((h) => h.meta);
    const unseen = unseenRefusals(metas, seenRefusals(await Deno.readTextFile(statusLog).catch(() => '')));
    for (const u of unseen) {
      console.log(`  ${u.name} ${u.status} ${u.code} was never answered by any test: "${u.when}"`);
    }
    const declared = metas.reduce((n, m) => n + (m.refusals ?? []).length, 0);
    console.log(
      unseen.length === 0
        ? `✔ all ${declared} declared refusals were received by a test (${elapsed()})`
        : `✘ ${unseen.length} of ${declared} declared refusals untested: test each, or remove it from the endpoint's refusals if it cannot happen`,
    );
    steps.push({ name: 'refusals', ok: unseen.length === 0 });
  }

  console.log('\n▶ supabase db advisors (security + performance, every level)');
  const adv = await new Deno.Command(bin('supabase'), {
    args: ['db', 'advisors', `--remote=${stack.databaseUrl}`, '--level', 'info', '--output-format', 'json'],
    cwd: '/tmp',
    env: { PGSSLMODE: 'disable' },
    stdout: 'piped',
    stderr: 'piped',
  }).output();
  const text = new TextDecoder().decode(adv.stdout);
  let advOk = false;
  try {
    const parsed = JSON.parse(text) as { results?: { name: string; level: string; detail: string }[]; error?: unknown };
    if (parsed.error || !Array.isArray(parsed.results)) {
      console.log(`advisors did not run: ${JSON.stringify(parsed.error ?? parsed).slice(0, 500)}`);
    } else {
      for (const f of parsed.results) console.log(`  ${f.level} ${f.name}: ${f.detail}`);
      advOk = parsed.results.length === 0;
      console.log(advOk ? '  no findings' : `  ${parsed.results.length} finding(s)`);
    }
  } catch {
    console.log(
      `advisors output was not JSON: ${text.slice(0, 500)} ${new TextDecoder().decode(adv.stderr).slice(0, 500)}`,
    );
  }
  console.log(`${advOk ? '✔' : '✘'} advisors (${elapsed()})`);
  steps.push({ name: 'advisors', ok: advOk });
} finally {
  await stack.stop();
}

const otherPassed = steps.filter((s) => s.ok && s.name !== 'vitest').length;
const otherFailed = steps.filter((s) => !s.ok && s.name !== 'vitest').length;
console.log(`\nsteps: ${steps.map((s) => `${s.name} ${s.ok ? 'ok' : 'FAILED'}`).join(', ')} (${elapsed()})`);
console.log(`${vitestPassed + otherPassed} passed, ${vitestFailed + otherFailed} failed`);
Deno.exit(steps.every((s) => s.ok) ? 0 : 1);
