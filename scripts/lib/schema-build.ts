// supabase/schema.sql's text (scripts/lib/schema.ts), from a database: one already migrated, or a
// throw-away embedded PostgreSQL built from the migrations exactly as `npm start` builds one (the
// local bootstrap, then scripts/lib/migrate.ts) and removed again. SCHEMA_PG_PORT sets its port
// (default: one the system picks).
import postgres from 'postgres';
import { startLocalPostgres } from './local-postgres.ts';
import { migrate } from './migrate.ts';
import { renderSchema } from './schema.ts';

function freePort(): number {
  const listener = Deno.listen({ hostname: '127.0.0.1', port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** supabase/schema.sql's text for a migrated database. */
export async function renderFromDatabase(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await renderSchema(sql);
  } finally {
    await sql.end();
  }
}

/**
 * `use` run against a new throw-away database that has the bootstrap and every migration, nothing
 * else, which is removed again afterwards.
 */
export async function withMigratedDatabase<T>(use: (url: string) => Promise<T>): Promise<T> {
  const port = Number(Deno.env.get('SCHEMA_PG_PORT') || freePort());
  const dataDir = await Deno.makeTempDir({ prefix: 'escrow-schema-' });
  const pg = await startLocalPostgres({ dataDir, port, fresh: true });
  try {
    await migrate(pg.url, { bootstrap: true });
    return await use(pg.url);
  } finally {
    await pg.stop().catch(() => {});
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

/** The rendering of a new database that has the bootstrap and every migration, nothing else. */
export function renderFromMigrations(): Promise<string> {
  return withMigratedDatabase(renderFromDatabase);
}
