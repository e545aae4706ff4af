// `npm run schema`: writes supabase/schema.sql, the definitions of the schemas public and private
// once every migration has run (scripts/lib/schema.ts), so that the current definition of a
// function is found in one place however many migrations redefined it.
//
// It builds a throw-away embedded PostgreSQL from the migrations exactly as `npm start` does (the
// local bootstrap, then scripts/lib/migrate.ts), reads its catalog, and removes it again.
//
//   npm run schema                  writes supabase/schema.sql
//   npm run schema -- --check       exits 1, with what differs, when supabase/schema.sql is stale
//   npm run schema -- --out FILE    writes FILE instead ('-' for standard output)
//   npm run schema -- --db-url URL  reads an already migrated database instead of building one
//
// SCHEMA_PG_PORT sets the throw-away database's port (default: one the system picks).
import { renderFromDatabase, renderFromMigrations } from './lib/schema-build.ts';
import { schemaDiff } from './lib/schema.ts';

const committedFile = new URL('../supabase/schema.sql', import.meta.url);

function option(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  if (i < 0) return undefined;
  const value = Deno.args[i + 1];
  if (value === undefined) throw new Error(`${name} needs a value`);
  return value;
}

const dbUrl = option('--db-url');
const text = dbUrl ? await renderFromDatabase(dbUrl) : await renderFromMigrations();

if (Deno.args.includes('--check')) {
  const committed = await Deno.readTextFile(committedFile).catch(() => '');
  const diff = schemaDiff(committed, text);
  if (diff) {
    console.error('supabase/schema.sql is stale: run `npm run schema` and commit it. What differs (+ new, - gone,');
    console.error('~ changed: the first differing line):');
    console.error(diff);
    Deno.exit(1);
  }
  console.log(`supabase/schema.sql is current (${text.split('\n').length - 1} lines)`);
} else {
  const out = option('--out');
  if (out === '-') {
    await Deno.stdout.write(new TextEncoder().encode(text));
  } else {
    const target = out ?? committedFile;
    await Deno.writeTextFile(target, text);
    console.log(`${out ?? 'supabase/schema.sql'} written (${text.split('\n').length - 1} lines)`);
  }
}
