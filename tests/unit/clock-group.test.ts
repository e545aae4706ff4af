// The clock group (tests/README.md): only suites named *.clock.test.ts may run the job, because the
// job acts on every row of the shared test database and those suites run one at a time after all
// the others. This fails when any other test or support file can reach the job, by any route:
// - by name in its text: the endpoint (an HTTP path, a functions.invoke name, the handler folder),
//   its header, the SQL function, the TypeScript module or its parts, the clock helper module;
// - by starting a server (scripts/start.ts) on the test database without --no-jobs;
// - in process: through the files it imports, followed the way the deploy check follows them.
// tests/support/no-job.ts backs this up at run time: a request to jobs-run from any other suite fails.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { walkImports } from '../../scripts/lib/imports.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (p: string) => readFileSync(`${root}${p}`, 'utf8');

function tsFiles(dir: string): string[] {
  return readdirSync(`${root}${dir}`).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(`${root}${path}`).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const isClockSuite = (f: string) => f.endsWith('.clock.test.ts');
/** Files that name the job on purpose: the helper only clock suites import, the guard, this test. */
const ALLOWED = new Set(['tests/support/clock.ts', 'tests/support/no-job.ts', 'tests/unit/clock-group.test.ts']);
const files = tsFiles('tests');
const others = files.filter((f) => !isClockSuite(f) && !ALLOWED.has(f));

/** Ways a file names the job. */
const NAMES: [RegExp, string][] = [
  [/jobs-run/, 'the jobs-run endpoint'],
  [/x-jobs-secret/i, 'the header only jobs-run reads'],
  [/\brun_jobs\b/, 'the SQL job private.run_jobs'],
  [/\b(runJobs|jobsRun)\b/, 'jobsRun (shared/jobs/jobs.ts) or runJobs (tests/support/clock.ts)'],
  [/\/jobs(\.ts)?['"]/, 'the module shared/jobs/jobs.ts'],
  [/\breconcilePending\b|\/reconcile(\.ts)?['"]/, 'the reconciliation pass of the job (shared/money/reconcile.ts)'],
  [/\bcleanup_expired\b/, 'the clean-up of the job (private.cleanup_expired)'],
  [/['"][^'"]*\/clock(\.ts)?['"]/, "tests/support/clock.ts, the clock group's helper"],
];
/** What a suite must never reach through its imports. */
const JOB_CODE = [/^shared\/jobs\.ts$/, /^shared\/reconcile\.ts$/, /^supabase\/functions\/jobs-run\//];

describe('the clock group', () => {
  it('has members, and every member is a suite named *.clock.test.ts', () => {
    const clock = files.filter(isClockSuite);
    expect(clock.length).toBeGreaterThan(0);
    const suites = files.filter((f) => f.endsWith('.test.ts'));
    expect(suites.length).toBeGreaterThan(clock.length);
  });

  it('no test or support file outside the group names the job', () => {
    const found = others.flatMap((f) => {
      const text = read(f);
      return NAMES.filter(([re]) => re.test(text)).map(([, what]) => `${f} names ${what}`);
    });
    expect(found, 'rename the suite *.clock.test.ts (and take runJobs from tests/support/clock.ts)').toEqual([]);
  });

  it('no file outside the group starts a server on the test database that runs the job by itself', () => {
    const launches = /['"](?:node:)?child_process['"]|Deno\.Command/;
    const found = others.filter((f) => {
      const text = read(f);
      return launches.test(text) && /scripts\/start\.ts/.test(text) && !/--no-jobs/.test(text);
    });
    expect(found, 'pass --no-jobs to scripts/start.ts, or make the suite a *.clock.test.ts').toEqual([]);
  });

  it("no suite outside the group imports the job's code, directly or through other files", () => {
    const found = others
      .filter((f) => f.endsWith('.test.ts'))
      .flatMap((f) => {
        const reached = walkImports(root, f).files.filter((p) => JOB_CODE.some((re) => re.test(p)));
        return reached.map((p) => `${f} reaches ${p}`);
      });
    expect(found, 'make the suite a *.clock.test.ts, or stop importing the job').toEqual([]);
  });

  it('its own checks catch each route (a suite written each way is found)', () => {
    const samples = [
      `await post('jobs-run', {}, { headers })`,
      'await fetch(`${base}/jobs-run`)',
      `await supabase.functions.invoke('jobs-run')`,
      `headers: { 'X-Jobs-Secret': secret }`,
      'await sql`select * from private.run_jobs(now())`',
      `import { jobsRun } from '../../shared/jobs/jobs.ts';`,
      `const { reconcilePending } = await import('../../shared/money/reconcile.ts');`,
      `import { runJobs as tick } from '../support/clock.ts';`,
    ];
    for (const s of samples) expect(NAMES.some(([re]) => re.test(s)), s).toBe(true);
    const innocent = [`import { newDeal } from '../support/escrows.ts';`, `spawn(deno, ['scripts/start.ts', '-q'])`];
    for (const s of innocent) expect(NAMES.some(([re]) => re.test(s)), s).toBe(false);
  });
});
