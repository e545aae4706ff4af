import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';

// Suites that run the job with a "now" in the future (runJobs) act on every row of the shared
// test database: they would release, end or fail what suites running beside them are still
// waiting on. They form the "clock" group, which runs after every other suite, one file at a time.
const root = new URL('.', import.meta.url).pathname;
function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}
const all = testFiles(join(root, 'tests'));
const clock = all.filter((f) => /\brunJobs\(/.test(readFileSync(join(root, f), 'utf8')));

export default defineConfig({
  test: {
    globalSetup: ['tests/support/global-setup.ts'],
    setupFiles: ['tests/support/env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'suites', include: all.filter((f) => !clock.includes(f)), sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'clock', include: clock, sequence: { groupOrder: 1 }, fileParallelism: false },
      },
    ],
  },
});
