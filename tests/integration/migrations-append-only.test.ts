// Migrations are append-only, and the migration runner (scripts/lib/migrate.ts, what `npm start`
// and deployments use) holds it: a file whose text differs from what was applied from it stops
// the run with its name, instead of leaving that database silently without the change.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { testDb } from '../support/db.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const name = `migrations_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
const url = (() => {
  const u = new URL(inject('databaseUrl'));
  u.pathname = `/${name}`;
  return u.toString();
})();

/** Runs the migration runner against the throw-away database, as a child process under Deno. */
function migrate(): Promise<{ code: number | null; stderr: string }> {
  const code = `import { migrate } from './scripts/lib/migrate.ts'; await migrate(${
    JSON.stringify(url)
  }, { bootstrap: true });`;
  return new Promise((resolve, reject) => {
    const child = spawn('node_modules/.bin/deno', ['eval', code], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('exit', (exit) => resolve({ code: exit, stderr }));
  });
}

afterAll(async () => {
  await testDb().unsafe(`drop database if exists ${name} with (force)`);
});

describe('the migration runner', () => {
  it('applies every migration once, and refuses to go on when an applied one was changed', async () => {
    await testDb().unsafe(`create database ${name}`);
    expect((await migrate()).code).toBe(0);
    // again: nothing new, nothing refused
    expect((await migrate()).code).toBe(0);
    // as if 20261124000100_conversations.sql had been edited after it was applied here
    const { default: postgres } = await import('postgres');
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql`update supabase_migrations.schema_migrations set statements = array['-- the text applied before']
                 where version = '20261124000100'`;
    } finally {
      await sql.end();
    }
    const run = await migrate();
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /migrations changed after they were applied to this database: 20261124000100_conversations\.sql\./,
    );
    expect(run.stderr).toMatch(/append-only/);
  }, 60_000);
});
