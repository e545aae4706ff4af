// The baselines of the request-path rows of `npm run bench`, served by a Deno process of their
// own on the same database with the same postgres.js and pool size as the service:
//   /bare       Deno.serve answering a JSON envelope, no database
//   /one-query  Deno + one postgres.js query (the reference the goals are ratios of)
//   /tx-query   the naive user read: a transaction, then set_config, then the query, each awaited
// Usage: deno run -A scripts/lib/bench-baseline.ts PORT DATABASE_URL POOL_MAX
import postgres from 'postgres';

const [port, url, poolMax] = Deno.args;
const sql = postgres(url as string, { max: Number(poolMax ?? 10), prepare: false, onnotice: () => {} });
const json = (data: unknown) =>
  new Response(JSON.stringify({ success: true, status: 200, data }), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });

Deno.serve(
  { port: Number(port), hostname: '127.0.0.1', onListen: () => console.log('baseline ready') },
  async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/bare') return json({ ok: true });
    if (path === '/one-query') return json((await sql`select now() as t, 1 as one`)[0]);
    if (path === '/tx-query') {
      const rows = await sql.begin(async (tx) => {
        await tx`select set_config('role', 'authenticated', true)`;
        return await tx`select now() as t, 1 as one`;
      });
      return json(rows[0]);
    }
    return new Response('not found', { status: 404 });
  },
);
