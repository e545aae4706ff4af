// A second functions server for the `streams` section of `npm run bench` (scripts/lib/bench-streams.ts):
// every function, served as `npm start` serves them, without the job, in a process of its own
// pointed at the bench stack's database. The live streams are measured here (its RSS, its CPU, the
// database connections it holds) while the bench stack's own server takes the writes.
//
//   deno run --allow-all scripts/lib/bench-stream-server.ts <port>
//
// The configuration comes from the environment the bench gives it (DATABASE_URL,
// DATABASE_SESSION_URL, DB_POOL_MAX, the stack's secrets); it prints `stream server ready` once it
// listens, and exits on SIGTERM.
import { loadFunctions, serveFunctions } from './server.ts';

const port = Number(Deno.args[0]);
const handlers = await loadFunctions();
const stop = new AbortController();
serveFunctions({ hostname: '127.0.0.1', port, handlers, quiet: true, signal: stop.signal, headerTimeoutMs: 'off' });
Deno.addSignalListener('SIGTERM', () => Deno.exit(0));
console.log('stream server ready');
