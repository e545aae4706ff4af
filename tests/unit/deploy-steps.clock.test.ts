// The README's step that schedules the job in a deployment (pg_cron + pg_net, secrets in Vault) calls
// what the jobs-run endpoint is: its folder's path under the functions' address, its method, the
// header it checks, with Vault secrets the README's own Vault step creates. A rename of the function,
// of its header or of a Vault name on one side only would leave a deployment whose job never runs,
// and nothing else would say so. A clock suite only because it names the job (tests/README.md): it
// never runs it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import jobsRun from '../../supabase/functions/jobs-run/handler.ts';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const deploy = readme.slice(readme.indexOf('## Deploying to Supabase'), readme.indexOf('## The npm lock file'));

/** The ```sql blocks of the deploy steps, without their list indentation. */
function sqlBlocks(text: string): string[] {
  return [...text.matchAll(/^( *)```sql\n([\s\S]*?)^\1```$/gm)].map((m) =>
    (m[2] as string).split('\n').map((l) => l.slice(Math.min((m[1] as string).length, l.search(/\S|$/)))).join('\n')
  );
}

const blocks = sqlBlocks(deploy);
const vaultStep = blocks.filter((b) => b.includes('vault.create_secret(')).join('\n');
const schedule = blocks.find((b) => b.includes('cron.schedule(')) ?? '';

/** Vault names the Vault step creates, with the value each is given. */
const created = new Map(
  [...vaultStep.matchAll(/vault\.create_secret\(\s*'([^']*)'\s*,\s*'([^']+)'\s*\)/g)].map((m) => [
    m[2] as string,
    m[1] as string,
  ]),
);

/** `(select decrypted_secret from vault.decrypted_secrets where name = '<name>')`, as a pattern. */
const FROM_VAULT = String
  .raw`\(\s*select\s+decrypted_secret\s+from\s+vault\.decrypted_secrets\s+where\s+name\s*=\s*'([^']+)'\s*\)`;

describe('jobs-run', () => {
  describe("the README's schedule of the job", () => {
    it('is there: a Vault step and a cron.schedule block in the deploy steps', () => {
      expect(vaultStep, 'README.md deploy steps: a ```sql block with vault.create_secret').not.toBe('');
      expect(schedule, 'README.md deploy steps: a ```sql block with cron.schedule').not.toBe('');
      expect(created.size).toBeGreaterThanOrEqual(2);
    });

    it('runs every minute, a POST as the endpoint is, with an empty body the endpoint accepts', () => {
      expect(schedule).toMatch(/cron\.schedule\(\s*'[a-z0-9-]+'\s*,\s*'\* \* \* \* \*'/);
      expect(jobsRun.meta.method).toBe('POST');
      expect(schedule).toContain('net.http_post(');
      const body = /body\s*:=\s*'([^']*)'::jsonb/.exec(schedule);
      expect(body, "the schedule sends body := '...'::jsonb").not.toBeNull();
      const parsed = JSON.parse(body![1] as string);
      // a deployment runs the job at the current time: `now` is refused there
      expect(parsed).toEqual({});
      expect(jobsRun.meta.body?.safeParse(parsed).success).toBe(true);
    });

    it("calls the function's path under the functions' address the Vault step stores", () => {
      const url = new RegExp(String.raw`url\s*:=\s*${FROM_VAULT}\s*\|\|\s*'([^']+)'`).exec(schedule);
      expect(url, "the url is the Vault secret of the functions' address || '/<function>'").not.toBeNull();
      const [, name, path] = url as unknown as [string, string, string];
      expect(path).toBe(`/${jobsRun.meta.name}`);
      expect(existsSync(new URL(`supabase/functions/${jobsRun.meta.name}/index.ts`, root))).toBe(true);
      expect([...created.keys()], `the Vault step creates '${name}'`).toContain(name);
      // the functions' base address, which the path is appended to
      expect(created.get(name)).toMatch(/^https:\/\/<project-ref>\.supabase\.co\/functions\/v1$/);
    });

    it('sends the header the endpoint checks, with the jobs secret the Vault step stores', () => {
      const header = jobsRun.meta.signedBy?.headers[0]?.name;
      expect(header).toBe('x-jobs-secret');
      const sent = new RegExp(String.raw`'([A-Za-z0-9-]+)'\s*,\s*${FROM_VAULT}`).exec(schedule);
      expect(sent, "the headers hold '<header>', (select decrypted_secret ... where name = '<name>')").not.toBeNull();
      const [, name, secret] = sent as unknown as [string, string, string];
      expect(name.toLowerCase()).toBe(header);
      expect([...created.keys()], `the Vault step creates '${secret}'`).toContain(secret);
      expect(created.get(secret)).toContain('JOBS_SECRET');
      // and the variables table says the same secret goes to Vault
      expect(deploy).toMatch(/\| `JOBS_SECRET` \|[^\n]*Vault/);
    });
  });
});
