// The local functions server: every supabase/functions/<name>/handler.ts served under Deno at
// /functions/v1/<name>, Supabase's local URL shape, with one log line per request. The API reference
// page is served at /functions/v1/docs/ from docs/api/ (./api-page.ts), the operator console at
// /console/ from console/ (./console-page.ts). Every answer carries
// X-Content-Type-Options: nosniff. A request's head must arrive within headerTimeoutMs (./slow-guard.ts
// owns the public port) and its body within bodyTimeoutMs of the head (408, and the connection is
// closed); a client that goes away mid-body is logged at info level and answered nothing it reads.
import { type Handler, MAX_BODY_BYTES } from '../../shared/core/endpoint.ts';
import { getConfig } from '../../shared/core/config.ts';
import { allowedOrigin, ALWAYS_HEADERS, errorBody, functionNotFound, jsonResponse } from '../../shared/core/http.ts';
import { log } from '../../shared/core/log.ts';
import { apiPageResponse } from './api-page.ts';
import { consoleResponse } from './console-page.ts';
import { slowGuard } from './slow-guard.ts';

/** How long a request's head may take (from the connection, or the previous answer). */
export const HEADER_TIMEOUT_MS = 10_000;
/** How long a request's body may take, from its head. */
export const BODY_TIMEOUT_MS = 30_000;

const root = new URL('../../', import.meta.url);

export async function loadFunctions(): Promise<Map<string, Handler>> {
  const dir = new URL('supabase/functions/', root);
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isDirectory && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(e.name)) names.push(e.name);
  }
  names.sort();
  const out = new Map<string, Handler>();
  for (const name of names) {
    const mod = await import(new URL(`${name}/handler.ts`, dir).href);
    out.set(name, mod.default as Handler);
  }
  return out;
}

export function serveFunctions(opts: {
  hostname: string;
  port: number;
  handlers: Map<string, Handler>;
  quiet?: boolean;
  signal?: AbortSignal;
  /** 'off': no guard, the functions on the public port (behind a gateway that bounds slow clients itself) */
  headerTimeoutMs?: number | 'off';
  bodyTimeoutMs?: number;
}): { finished: Promise<void> } {
  const headerTimeoutMs = opts.headerTimeoutMs === 'off' ? undefined : opts.headerTimeoutMs ?? HEADER_TIMEOUT_MS;
  const guarded = headerTimeoutMs !== undefined;
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  // the functions themselves, on a loopback port of the system's choosing, behind the guard
  // (without it, on the public port)
  const inner = Deno.serve(
    guarded
      ? { hostname: '127.0.0.1', port: 0, signal: opts.signal, onListen: () => {} }
      : { hostname: opts.hostname, port: opts.port, signal: opts.signal, onListen: () => {} },
    async (req, info) => {
      const started = performance.now();
      const url = new URL(req.url);
      const match = /^\/functions\/v1\/([^/]+)\/?$/.exec(url.pathname);
      const name = match?.[1] ?? '';
      const handler = opts.handlers.get(name);
      // Like Supabase's gateway, the server owns x-forwarded-for: the client address it saw. The
      // request is rebuilt from its parts, never from the request itself, whose signal Deno would
      // copy (and warn about: its legacy abort on every answer).
      const headers = new Headers(req.headers);
      // read now: the request's info is gone once it is answered
      const { port: upstreamPort, hostname: peer } = info.remoteAddr;
      headers.set('x-forwarded-for', guard?.clientOf(upstreamPort) ?? peer);
      const hasBody = req.body !== null && req.method !== 'GET' && req.method !== 'HEAD';
      // the body is received here, within its bound, before any handler runs (up to one byte over
      // the limit: the endpoint answers 413 for more)
      const body = hasBody ? await receive(req.body as ReadableStream<Uint8Array>, bodyTimeoutMs) : undefined;
      let res: Response;
      if (body?.outcome === 'late') {
        // the body did not come in time: 408, then the connection is closed
        log.info('http.body_timeout', { method: req.method, path: url.pathname, after_ms: bodyTimeoutMs });
        setTimeout(() => guard?.close(upstreamPort), 200);
        res = jsonResponse(
          408,
          errorBody(408, 'request_timeout', `The request body was not received within ${bodyTimeoutMs / 1000} s`),
          { Connection: 'close' },
        );
      } else if (body?.outcome === 'gone') {
        // the client went away mid-body: nobody reads an answer, and nothing of ours failed
        log.info('http.client_gone', { method: req.method, path: url.pathname });
        res = jsonResponse(400, errorBody(400, 'validation_failed', 'The request body was not received in full'));
      } else {
        const forwarded = new Request(req.url, {
          method: req.method,
          headers,
          body: body?.outcome === 'ok' ? (body.bytes as Uint8Array<ArrayBuffer>) : undefined,
        });
        // not a function: the API reference page, the operator console, and their files; else Supabase's 404
        res = handler ? await handler(forwarded) : (await apiPageResponse(req)) ?? (await consoleResponse(req)) ??
          functionNotFound(
            name || url.pathname,
            allowedOrigin(getConfig().CORS_ALLOW_ORIGIN, req.headers.get('origin')),
          );
      }
      res = withAlwaysHeaders(res);
      if (!opts.quiet) {
        // one format for the whole log: a JSON line, like every line the functions write
        log.info('http.request', {
          method: req.method,
          path: url.pathname,
          status: res.status,
          ms: Math.round(performance.now() - started),
        });
      }
      return res;
    },
  );
  const guard = headerTimeoutMs === undefined ? undefined : slowGuard({
    hostname: opts.hostname,
    port: opts.port,
    upstream: () => inner.addr,
    headerTimeoutMs,
    signal: opts.signal,
  });
  return { finished: Promise.all([inner.finished, guard?.finished]).then(() => {}) };
}

/** The answer with ALWAYS_HEADERS (nosniff), whatever produced it. */
function withAlwaysHeaders(res: Response): Response {
  const missing = Object.entries(ALWAYS_HEADERS).filter(([k]) => !res.headers.has(k));
  if (missing.length === 0) return res;
  try {
    for (const [k, v] of missing) res.headers.set(k, v);
    return res;
  } catch {
    // immutable headers: the same answer, rebuilt
    const headers = new Headers(res.headers);
    for (const [k, v] of missing) headers.set(k, v);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}

/**
 * A request's body as bytes, read within `ms` (up to MAX_BODY_BYTES + 1: enough for the endpoint
 * to see it is too large); 'late' when it had not ended by then, 'gone' when the client closed the
 * connection first.
 */
async function receive(
  source: ReadableStream<Uint8Array>,
  ms: number,
): Promise<{ outcome: 'ok'; bytes: Uint8Array } | { outcome: 'late' | 'gone' }> {
  const reader = source.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => timer = setTimeout(() => resolve('late'), ms));
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size <= MAX_BODY_BYTES) {
      const r = await Promise.race([reader.read(), late]);
      if (r === 'late') {
        reader.cancel().catch(() => {});
        return { outcome: 'late' };
      }
      if (r.done) break;
      chunks.push(r.value);
      size += r.value.byteLength;
    }
  } catch {
    return { outcome: 'gone' };
  } finally {
    clearTimeout(timer);
  }
  if (size > MAX_BODY_BYTES) reader.cancel().catch(() => {});
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { outcome: 'ok', bytes };
}
