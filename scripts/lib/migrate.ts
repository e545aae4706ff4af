// Applies supabase/migrations/*.sql in order, each in its own transaction, recording each in
// supabase_migrations.schema_migrations (the table the supabase CLI reads), so re-running
// applies only new files. For a local database the bootstrap (Supabase roles, auth.uid()) runs first.
import postgres from 'postgres';

const root = new URL('../../', import.meta.url);

/** A migration file differs from what was applied from it (migrations are append-only). */
export class MigrationChangedError extends Error {}

export async function migrate(
  databaseUrl: string,
  opts: { bootstrap: boolean; log?: (line: string) => void },
): Promise<string[]> {
  const say = opts.log ?? (() => {});
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    if (opts.bootstrap) {
      await sql.unsafe(await Deno.readTextFile(new URL('scripts/sql/local-bootstrap.sql', root)));
    }
    await sql`create schema if not exists supabase_migrations`;
    await sql`create table if not exists supabase_migrations.schema_migrations (version text primary key, statements text[], name text)`;
    const rows = await sql<{ version: string; statements: string[] | null }[]>`
      select version, statements from supabase_migrations.schema_migrations`;
    const applied = new Map(rows.map((r) => [r.version, r.statements?.join('') ?? null]));
    const dir = new URL('supabase/migrations/', root);
    const files: string[] = [];
    for await (const e of Deno.readDir(dir)) if (e.isFile && /^\d+_.+\.sql$/.test(e.name)) files.push(e.name);
    files.sort();
    // Migrations are append-only: a file that differs from what was applied from it would leave
    // this database without the change (it is never applied again). Refuse to go on.
    const changed: string[] = [];
    for (const file of files) {
      const version = (/^(\d+)_/.exec(file) as RegExpExecArray)[1] as string;
      const before = applied.get(version);
      if (before !== undefined && before !== null && before !== (await Deno.readTextFile(new URL(file, dir)))) {
        changed.push(file);
      }
    }
    if (changed.length > 0) {
      throw new MigrationChangedError(
        `migrations changed after they were applied to this database: ${changed.join(', ')}. ` +
          'Migrations are append-only: restore the file and put the change in a new one ' +
          '(docs/architecture.md, "A migration"). A local database can be started over with `npm start -- --fresh`.',
      );
    }
    const done: string[] = [];
    for (const file of files) {
      const [, version, name] = /^(\d+)_(.+)\.sql$/.exec(file) as RegExpExecArray;
      if (applied.has(version as string)) continue;
      const text = await Deno.readTextFile(new URL(file, dir));
      await sql.begin(async (tx) => {
        await tx.unsafe(text);
        await tx`insert into supabase_migrations.schema_migrations (version, statements, name)
                 values (${version as string}, ${[text]}, ${name as string})`;
      });
      say(`migration applied: ${file}`);
      done.push(file);
    }
    if (done.length === 0) say(`migrations: ${files.length} already applied, nothing new`);
    return done;
  } finally {
    await sql.end();
  }
}
