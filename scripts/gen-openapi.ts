// `npm run openapi`: writes docs/api/openapi.json, the OpenAPI 3.1 document built from every
// function's endpoint definition (shared/openapi.ts). The `openapi` function serves that file, the
// reference page (docs/api/index.html) renders it and the typed client (clients/typescript) is
// generated from it; tests/unit/openapi.test.ts fails when it is stale.
import { openApiDocument, renderOpenApi } from '../shared/openapi.ts';
import { loadFunctions } from './lib/server.ts';

const handlers = await loadFunctions();
const out = new URL('../docs/api/openapi.json', import.meta.url);
await Deno.writeTextFile(out, renderOpenApi(openApiDocument([...handlers.values()].map((h) => h.meta))));
console.log(`docs/api/openapi.json written: ${handlers.size} operations`);
