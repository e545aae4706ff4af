// The admin right given and taken as an operator does: `npm run admin:grant -- <phone>` and
// `npm run admin:revoke -- <phone>` (scripts/admin.ts) run as a child process against the test
// database. Used by tests/integration/admins.test.ts, which tests the script itself, and by suites
// that need an admin.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, inject } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run admin:<verb> -- <args>`, as an operator types it, with the given environment changes. */
export function adminScript(
  verb: 'grant' | 'revoke',
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Run> {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, DATABASE_URL: inject('databaseUrl'), ...env })) {
    if (v !== undefined) merged[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', `admin:${verb}`, '--', ...args], {
      cwd: root,
      env: merged,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Makes the account with this phone an admin (the script must succeed). */
export async function grantAdmin(phone: string): Promise<void> {
  const run = await adminScript('grant', [phone]);
  expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
}
