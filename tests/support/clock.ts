// The job, for the clock group only: suites named *.clock.test.ts, which run one file at a time
// after every other suite (tests/README.md). tests/unit/clock-group.test.ts fails when any other
// file imports this module.
import { call } from './api.ts';
import { TEST_JOBS_SECRET } from './stack.ts';

/** Runs the job as the scheduler does, at an explicit time. */
export const runJobs = (now: string) =>
  call('jobs-run', { method: 'POST', body: { now }, headers: { 'x-jobs-secret': TEST_JOBS_SECRET } });
