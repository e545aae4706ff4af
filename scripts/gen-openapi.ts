// `npm run openapi`: writes docs/api/openapi.json, the OpenAPI 3.1 document built from every
// function's endpoint definition (scripts/lib/spec/openapi.ts), then the typed client's types generated from
// it, clients/typescript/schema.ts (scripts/lib/client-schema.ts). The `openapi` function serves
// the document and the reference page (docs/api/index.html) renders it; tests/unit/openapi.test.ts
// fails when the document is stale, tests/unit/client.test.ts when the client's types are.
import { openApiDocument, renderOpenApi } from './lib/spec/openapi.ts';
import { CLIENT_SCHEMA_PATH, clientSchema } from './lib/client-schema.ts';
import { loadFunctions } from './lib/server.ts';

const handlers = await loadFunctions();
const out = new URL('../docs/api/openapi.json', import.meta.url);
const document = renderOpenApi(openApiDocument([...handlers.values()].map((h) => h.meta)));
await Deno.writeTextFile(out, document);
console.log(`docs/api/openapi.json written: ${handlers.size} operations`);
await Deno.writeTextFile(new URL(`../${CLIENT_SCHEMA_PATH}`, import.meta.url), await clientSchema(document));
console.log(`${CLIENT_SCHEMA_PATH} written (the typed client's types)`);
