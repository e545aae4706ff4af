// The local functions server: every supabase/functions/<name>/handler.ts served under Deno at
// /functions/v1/<name>, Supabase's local URL shape, with one log line per request.
import type { Handler } from '../../shared/endpoint.ts';
import { getConfig } from '../../shared/config.ts';
import { functionNotFound } from '../../shared/http.ts';

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
      // Like Supabase's gateway, the server owns x-forwarded-for: the client address it saw.
      const headers = new Headers(req.headers);
      headers.set('x-forwarded-for', info.remoteAddr.hostname);
      const forwarded = new Request(req, { headers });
      const res = handler
        ? await handler(forwarded)
        : functionNotFound(name || url.pathname, getConfig().CORS_ALLOW_ORIGIN);
      if (!opts.quiet) {
        const ms = (performance.now() - started).toFixed(0);
        console.log(`${new Date().toISOString()} ${req.method} ${url.pathname} ${res.status} ${ms}ms`);
      }
      return res;
    },
  );
}
