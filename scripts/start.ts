// `npm start`: the whole service locally. Embedded PostgreSQL 17 on 127.0.0.1:54322 (unless
// DATABASE_URL is set), the bootstrap and every migration, then every function under Deno at
// http://127.0.0.1:54321/functions/v1/<name>. Ctrl-C stops everything; the data stays in .data/.
//
// Options (environment): PORT (functions, 54321), PG_PORT (embedded Postgres, 54322),
// ESCROW_DATA_DIR (embedded Postgres data, .data/postgres). Flag --fresh wipes the data first
// (used by the test suite). --quiet drops the per-request lines. --no-jobs turns off the
// once-a-minute job (the test suite drives it with explicit times). HTTP_HEADER_TIMEOUT_MS (10000) and
// HTTP_BODY_TIMEOUT_MS (30000) bound how long a request's head and body may take (scripts/lib/server.ts);
// HTTP_HEADER_TIMEOUT_MS=off serves without the guard that bounds the head, as behind a gateway that
// bounds slow clients itself (`npm run bench` measures the request path so: docs/performance.md).
import { DEFAULT_PG_PORT, type LocalPostgres, startLocalPostgres } from './lib/local-postgres.ts';
import { migrate, MigrationChangedError } from './lib/migrate.ts';
import { loadFunctions, serveFunctions } from './lib/server.ts';
import { LOCAL_SECRETS } from '../shared/core/published-secrets.ts';
import { log } from '../shared/core/log.ts';

// postgres.js 3.4.9 under Deno throws from a timer when Postgres closes a connection (a restart, a
// terminated backend) while a write is queued on it: a TypeError in connection.js nextWrite,
// outside any request (porsager/postgres#1154 and porsager/postgres#1208, denoland/deno#34667), which would end the
// whole server. The query it belonged to has already failed with CONNECTION_CLOSED. The connection
// it came from is left unable to send (its write timer is never cleared, so its later writes, the
// next start-up message included, are never flushed: every reconnection waits out connect_timeout),
// so the pool is replaced: requests under way finish on the old one (5 s at most), new ones get
// fresh connections.
let poolReplacedAt = 0;
globalThis.addEventListener('error', (e) => {
  const err = e.error;
  if (
    err instanceof TypeError && /reading 'write'/.test(err.message) &&
    /postgres\/src\/connection\.js/.test(err.stack ?? '')
  ) {
    e.preventDefault();
    const replace = Date.now() - poolReplacedAt > 1_000;
    log.warn('db.write_after_close', { error: err.message, pool_replaced: replace });
    if (replace) {
      poolReplacedAt = Date.now();
      // imported when needed, as at shutdown below
      void import('../shared/core/db.ts').then(({ closeDb }) => closeDb()).catch(() => {});
    }
  }
});

class StartError extends Error {}

function port(name: string, def: number): number {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new StartError(`${name} must be a port number between 1 and 65535 (got "${raw}")`);
  }
  return n;
}

/** A positive whole number of milliseconds from the environment; undefined when unset (the default). */
function positiveEnv(name: string): number | undefined {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new StartError(`${name} must be a positive whole number of milliseconds (got "${raw}")`);
  }
  return n;
}

function ensurePortFree(p: number, what: string, variable: string) {
  try {
    Deno.listen({ hostname: '127.0.0.1', port: p }).close();
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new StartError(`port ${p} (${what}) is already in use; stop what holds it or set ${variable}`);
    }
    throw err;
  }
}

async function main() {
  const args = new Set(Deno.args);
  const quiet = args.has('--quiet');
  const httpPort = port('PORT', 54321);
  const pgPort = port('PG_PORT', DEFAULT_PG_PORT);
  const root = new URL('../', import.meta.url);
  const dataDir = Deno.env.get('ESCROW_DATA_DIR') || new URL('.data/postgres', root).pathname;

  let pg: LocalPostgres | undefined;
  let databaseUrl = Deno.env.get('DATABASE_URL') || '';
  const local = !databaseUrl;
  // Only this script may say "local": a marker inherited from a shell is dropped.
  if (!local) Deno.env.delete('ESCROW_LOCAL_STACK');
  ensurePortFree(httpPort, 'functions server', 'PORT');

  if (local) {
    for (const [k, v] of Object.entries(LOCAL_SECRETS)) if (!Deno.env.get(k)) Deno.env.set(k, v);
    ensurePortFree(pgPort, 'embedded PostgreSQL', 'PG_PORT');
    try {
      pg = await startLocalPostgres({
        dataDir,
        port: pgPort,
        fresh: args.has('--fresh'),
        onCreate: () => console.log(`postgres: creating a new database in ${dataDir}`),
      });
    } catch (err) {
      throw new StartError(err instanceof Error ? err.message : String(err));
    }
    databaseUrl = pg.url;
    Deno.env.set('DATABASE_URL', databaseUrl);
    // a direct connection keeps its session, so live streams LISTEN on it; set
    // DATABASE_SESSION_URL empty to have them poll instead (docs/events.md)
    if (Deno.env.get('DATABASE_SESSION_URL') === undefined) Deno.env.set('DATABASE_SESSION_URL', databaseUrl);
    // what makes this the local stack for shared/core/config.ts (with the loopback address above)
    Deno.env.set('ESCROW_LOCAL_STACK', '1');
    console.log(`postgres: ready on 127.0.0.1:${pgPort} (data in ${dataDir})`);
  }

  // Configuration is checked before anything is served: a missing secret stops here, by name.
  const { parseConfig, ConfigError } = await import('../shared/core/config.ts');
  try {
    parseConfig(Deno.env.toObject());
  } catch (err) {
    await pg?.stop();
    if (err instanceof ConfigError) throw new StartError(err.message);
    throw err;
  }

  try {
    await migrate(databaseUrl, { bootstrap: local, log: (l) => console.log(l) });
  } catch (err) {
    await pg?.stop();
    if (err instanceof MigrationChangedError) throw new StartError(err.message);
    throw err;
  }

  const handlers = await loadFunctions();
  // as every function's index.ts does: webhook attempts right after each write
  await import('../shared/webhooks/on-write.ts');
  const stop = new AbortController();
  let server: { finished: Promise<void> };
  try {
    server = serveFunctions({
      hostname: '127.0.0.1',
      port: httpPort,
      handlers,
      quiet,
      signal: stop.signal,
      headerTimeoutMs: Deno.env.get('HTTP_HEADER_TIMEOUT_MS') === 'off' ? 'off' : positiveEnv('HTTP_HEADER_TIMEOUT_MS'),
      bodyTimeoutMs: positiveEnv('HTTP_BODY_TIMEOUT_MS'),
    });
  } catch (err) {
    await pg?.stop();
    if (err instanceof Deno.errors.AddrInUse) throw new StartError(`port ${httpPort} is already in use; set PORT`);
    throw err;
  }
  const base = `http://127.0.0.1:${httpPort}/functions/v1`;
  console.log(`functions: ${handlers.size} served under ${base}/`);
  for (const [name, h] of handlers) console.log(`  ${h.meta.method.padEnd(5)} ${base}/${name}`);

  // The job (inspection releases, ended escrows, stranded payouts, queued SMS) every minute, as
  // pg_cron does in production. --no-jobs leaves it to be run by hand (the tests drive time).
  const { jobsRun } = await import('../shared/jobs/jobs.ts');
  const jobs = args.has('--no-jobs') ? undefined : setInterval(() => {
    jobsRun().catch((err) => console.error(`jobs: ${err instanceof Error ? err.message : err}`));
  }, 60_000);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping`);
    if (jobs) clearInterval(jobs);
    stop.abort();
    // live streams would hold the server open: they end, and their clients reconnect elsewhere
    const { closeAllStreams } = await import('../shared/events/stream.ts');
    closeAllStreams();
    await server.finished.catch(() => {});
    // messages being sent after their answers (OTP SMS) finish before the database closes
    const { backgroundSettled } = await import('../shared/core/background.ts');
    await backgroundSettled();
    const { closeDb } = await import('../shared/core/db.ts');
    await closeDb().catch(() => {});
    if (pg) await pg.stop().catch(() => {});
    console.log('stopped; data kept');
    Deno.exit(0);
  };
  Deno.addSignalListener('SIGINT', () => void shutdown('SIGINT'));
  Deno.addSignalListener('SIGTERM', () => void shutdown('SIGTERM'));
  console.log(`API reference: ${base}/docs/ (the OpenAPI document: ${base}/openapi)`);
  console.log(`operator console: http://127.0.0.1:${httpPort}/console/ (docs/operators.md#the-console)`);
  console.log(`ready: ${base}/ (Ctrl-C to stop)`);
}

try {
  await main();
} catch (err) {
  if (err instanceof StartError) {
    console.error(`error: ${err.message}`);
    Deno.exit(1);
  }
  throw err;
}
