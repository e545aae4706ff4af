// Every function's endpoint definition (the default export of supabase/functions/<name>/handler.ts),
// for unit tests that check a rule across all of them.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The meta of every function, sorted by name. */
export async function loadEndpointMetas(): Promise<EndpointMeta[]> {
  const names = readdirSync(`${root}supabase/functions`)
    .filter((n) => statSync(`${root}supabase/functions/${n}`).isDirectory())
    .sort();
  return await Promise.all(names.map(async (name) => {
    const mod = await import(pathToFileURL(`${root}supabase/functions/${name}/handler.ts`).href);
    return (mod.default as { meta: EndpointMeta }).meta;
  }));
}
