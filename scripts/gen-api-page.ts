// `npm run docs:api`: writes the API reference page, docs/api/ (index.html, its script and config,
// and Swagger UI's files from node_modules/swagger-ui-dist), as scripts/lib/api-page.ts builds it.
// docs/api/openapi.json, the document the page renders, is not written here. Files of docs/api/
// that the page no longer has (from an older renderer) are removed.
import { apiPageDir, buildApiPage, DOCUMENT_FILE, rendererVersion } from './lib/api-page.ts';

const files = buildApiPage();
await Deno.mkdir(apiPageDir, { recursive: true });
for (const [name, text] of files) await Deno.writeTextFile(new URL(name, apiPageDir), text);
for await (const e of Deno.readDir(apiPageDir)) {
  if (e.isFile && e.name !== DOCUMENT_FILE && !files.has(e.name)) {
    await Deno.remove(new URL(e.name, apiPageDir));
    console.log(`docs/api/${e.name} removed`);
  }
}
console.log(`docs/api/ written: ${files.size} files, Swagger UI ${rendererVersion()}`);
