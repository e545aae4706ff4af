// The local functions server: every supabase/functions/<name>/handler.ts served under Deno at
// /functions/v1/<name>, Supabase's local URL shape, with one log line per request. The API reference
// page is served at /functions/v1/docs/ from docs/api/ (./api-page.ts).
import type { Handler } from '../../shared/core/endpoint.ts';
import { getConfig } from '../../shared/core/config.ts';
import { functionNotFound } from '../../shared/core/http.ts';
import { log } from '../../shared/core/log.ts';
import { apiPageResponse } from './api-page.ts';

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
}): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: opts.hostname, port: opts.port, signal: opts.signal, onListen: () => {} },
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
      headers.set('x-forwarded-for', info.remoteAddr.hostname);
      const hasBody = req.body !== null && req.method !== 'GET' && req.method !== 'HEAD';
      const forwarded = new Request(req.url, {
        method: req.method,
        headers,
        body: hasBody ? req.body : undefined,
        ...(hasBody ? { duplex: 'half' } : {}),
      } as RequestInit);
      // not a function: the API reference page and its files, else Supabase's 404
      const res = handler
        ? await handler(forwarded)
        : (await apiPageResponse(req)) ?? functionNotFound(name || url.pathname, getConfig().CORS_ALLOW_ORIGIN);
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
}
