// `npm run gen`: writes every generated file from its one source, a line per file.
// `npm run gen -- --check` (a step of `npm test`): writes nothing, and exits 1 naming each file
// that is not what the generator makes (edited by hand, or its source changed since).
//
//   supabase/functions/<name>/index.ts   the entry of each function (the same three lines)
//   supabase/config.toml                 its [functions.<name>] blocks, between the functions markers
//   README.md                            the endpoint and Idempotency-Key tables, between their markers
//   docs/architecture.md                 the operation map, between the operations markers
//   docs/operators.md                    the operator endpoints and their roles, between their markers
//   docs/compliance.md                   the retention table (shared/compliance/retention.ts), between its markers
//   docs/api/openapi.json                the OpenAPI document (scripts/lib/spec/openapi.ts)
//   clients/typescript/schema.ts         the typed client's types, from that document
//   docs/escrow-states.md                the escrow state table (scripts/lib/spec/escrow-states.ts)
//   docs/notifications.md                the notification catalog (shared/messages/catalog.ts)
//   docs/errors.md                       the refusal catalog (shared/refusals/catalog.ts)
//   supabase/schema.sql                  every definition as the migrations leave it (a throw-away database)
//   tests/support/seeds.ts               the KYC tiers and fee schedules the migrations seed (the same database)
//   console/vendor/*                     preact and htm for the operator console, copied from node_modules
//   console/config.js                    the console's API base URL as committed (scripts/lib/console-page.ts)
//   console/roles.js                     the roles each operator endpoint admits, for the console's forms
//
// The sources: the endpoint definitions (supabase/functions/*/handler.ts), the catalogs in shared/,
// and the migrations. docs/architecture.md#generated-files says which is which.
import { loadFunctions } from './lib/server.ts';
import { openApiDocument, renderOpenApi } from './lib/spec/openapi.ts';
import { CLIENT_SCHEMA_PATH, clientSchema } from './lib/client-schema.ts';
import { renderStatesDoc } from './lib/spec/escrow-states.ts';
import { renderNotificationsDoc } from './lib/spec/notifications-doc.ts';
import { renderErrorsDoc } from './lib/spec/errors-doc.ts';
import {
  CONFIG_END,
  CONFIG_START,
  configBlocks,
  ENDPOINTS_END,
  ENDPOINTS_START,
  endpointTable,
  FUNCTION_INDEX,
  idempotencyTable,
  IDEMPOTENT_END,
  IDEMPOTENT_START,
  OPERATOR_ENDPOINTS_END,
  OPERATOR_ENDPOINTS_START,
  operatorEndpointTable,
  replaceRegion,
} from './lib/spec/generated.ts';
import { MAP_END, MAP_START, operationMap, operationRows } from './lib/spec/operation-map.ts';
import { renderFromDatabase, withMigratedDatabase } from './lib/schema-build.ts';
import { renderSeeds, SEEDS_PATH } from './lib/spec/seeds.ts';
import { RETENTION_END, RETENTION_START, retentionTable } from './lib/spec/retention-doc.ts';
import { buildVendor, configModule, rolesModule, STATIC_API_BASE } from './lib/console-page.ts';

const root = new URL('../', import.meta.url).pathname;
const check = Deno.args.includes('--check');
const started = performance.now();

const read = (file: string) => Deno.readTextFile(`${root}${file}`).catch(() => '');

const handlers = await loadFunctions();
const names = [...handlers.keys()];
const metas = [...handlers.values()].map((h) => h.meta);
const document = renderOpenApi(openApiDocument(metas));
// one throw-away database built from the migrations, for schema.sql and the seeded figures
const fromMigrations = await withMigratedDatabase(async (url) => ({
  schema: await renderFromDatabase(url),
  seeds: await renderSeeds(url),
}));

/** Each generated file and how to make it from what is in the repository now. */
const targets: { file: string; make: () => Promise<string> | string }[] = [
  ...names.map((name) => ({ file: `supabase/functions/${name}/index.ts`, make: () => FUNCTION_INDEX })),
  {
    file: 'supabase/config.toml',
    make: async () =>
      replaceRegion(await read('supabase/config.toml'), CONFIG_START, CONFIG_END, configBlocks(names), 'config.toml'),
  },
  {
    file: 'README.md',
    make: async () => {
      const text = replaceRegion(
        await read('README.md'),
        ENDPOINTS_START,
        ENDPOINTS_END,
        endpointTable(metas),
        'README.md',
      );
      return replaceRegion(text, IDEMPOTENT_START, IDEMPOTENT_END, idempotencyTable(metas), 'README.md');
    },
  },
  {
    file: 'docs/architecture.md',
    make: async () =>
      replaceRegion(
        await read('docs/architecture.md'),
        MAP_START,
        MAP_END,
        operationMap(operationRows(root, names)),
        'docs/architecture.md',
      ),
  },
  {
    file: 'docs/operators.md',
    make: async () =>
      replaceRegion(
        await read('docs/operators.md'),
        OPERATOR_ENDPOINTS_START,
        OPERATOR_ENDPOINTS_END,
        operatorEndpointTable(metas),
        'docs/operators.md',
      ),
  },
  {
    file: 'docs/compliance.md',
    make: async () =>
      replaceRegion(
        await read('docs/compliance.md'),
        RETENTION_START,
        RETENTION_END,
        retentionTable(),
        'docs/compliance.md',
      ),
  },
  { file: 'docs/api/openapi.json', make: () => document },
  { file: CLIENT_SCHEMA_PATH, make: () => clientSchema(document) },
  { file: 'docs/escrow-states.md', make: () => renderStatesDoc() },
  { file: 'docs/notifications.md', make: () => renderNotificationsDoc() },
  { file: 'docs/errors.md', make: () => renderErrorsDoc() },
  { file: 'supabase/schema.sql', make: () => fromMigrations.schema },
  { file: SEEDS_PATH, make: () => fromMigrations.seeds },
  ...[...buildVendor()].map(([name, text]) => ({ file: `console/vendor/${name}`, make: () => text })),
  { file: 'console/config.js', make: () => configModule(STATIC_API_BASE) },
  {
    file: 'console/roles.js',
    make: () =>
      rolesModule(
        metas.filter((m) => m.auth === 'operator').map((m) => ({
          name: m.name,
          roles: m.authRoles ?? null,
          fourEyes: m.status === 202 || (m.alsoSucceedsWith ?? []).some((s) => s.status === 202),
        })),
      ),
  },
];

const stale: string[] = [];
let written = 0;
for (const t of targets) {
  const wanted = await t.make();
  const current = await read(t.file);
  if (wanted === current) {
    console.log(`  ✔ ${t.file}`);
  } else if (check) {
    stale.push(t.file);
    console.log(`  ✘ ${t.file}: not what \`npm run gen\` makes`);
  } else {
    await Deno.mkdir(`${root}${t.file}`.replace(/\/[^/]*$/, ''), { recursive: true });
    await Deno.writeTextFile(`${root}${t.file}`, wanted);
    written++;
    console.log(`  ✎ ${t.file} written`);
  }
}
const took = `${((performance.now() - started) / 1000).toFixed(1)}s`;
if (stale.length > 0) {
  console.error(
    `${stale.length} generated file(s) stale: ${stale.join(', ')}. Run \`npm run gen\` and commit them (${took}).`,
  );
  Deno.exit(1);
}
console.log(
  check
    ? `${targets.length} generated files current (${took})`
    : `${written} written, ${targets.length - written} already up to date (${took})`,
);
