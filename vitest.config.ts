import { defineConfig } from 'vitest/config';

// Two projects over one stack. The stack is started once, by the root config's globalSetup
// (Vitest always runs the root project's globalSetup and gives every project what it provides);
// the projects do not extend this file, so they do not start a second stack on the same ports.
//
// The "clock" group: suites that run the job (jobs-run) act on every row of the shared test
// database, with a "now" in the future: they would release, end or fail what suites running beside
// them are still waiting on. They are named *.clock.test.ts and run after every other suite, one
// file at a time. tests/unit/clock-group.test.ts fails when a suite outside the group names the
// job by any route, and tests/support/no-job.ts refuses the call at run time (tests/README.md).
const CLOCK = 'tests/**/*.clock.test.ts';

const common = {
  setupFiles: ['tests/support/env.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    globalSetup: ['tests/support/global-setup.ts'],
    projects: [
      {
        test: {
          ...common,
          name: 'suites',
          include: ['tests/**/*.test.ts'],
          exclude: [CLOCK],
          setupFiles: [...common.setupFiles, 'tests/support/no-job.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: { ...common, name: 'clock', include: [CLOCK], sequence: { groupOrder: 1 }, fileParallelism: false },
      },
    ],
  },
});
