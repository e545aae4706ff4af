// TEMPORARY, to drop when supabase/functions/openapi lands (it serves the document itself, and once
// it exists this is never reached): GET /functions/v1/openapi answers docs/api/openapi.json, so that
// the API reference page served by the local server has a document to render meanwhile. Dropping it
// is deleting this file and its one line in scripts/lib/server.ts.
import { readFile } from 'node:fs/promises';

export async function openapiStopgap(req: Request): Promise<Response | undefined> {
  if (new URL(req.url).pathname !== '/functions/v1/openapi' || req.method !== 'GET') return undefined;
  const text = await readFile(new URL('../../docs/api/openapi.json', import.meta.url), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  return new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8' } });
}
