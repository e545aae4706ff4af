// Keeps the repository's shape, its config and its docs in step with the code. Everything here
// is derived from the folders in supabase/functions, so a new function is checked the moment
// its folder exists. Each failure message says which file to fix and how.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { AUTH_COLUMN } from '../../scripts/lib/spec/generated.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const path = (p: string) => `${root}${p}`;
const read = (p: string) => readFileSync(path(p), 'utf8');

const functionNames = readdirSync(path('supabase/functions'))
  .filter((n) => statSync(path(`supabase/functions/${n}`)).isDirectory())
  .sort();

async function metaOf(name: string): Promise<EndpointMeta | undefined> {
  const mod = await import(pathToFileURL(path(`supabase/functions/${name}/handler.ts`)).href);
  return (mod.default as { meta?: EndpointMeta } | undefined)?.meta;
}

// --- supabase/config.toml: just enough TOML for section headers and `key = value` lines ------

type TomlTable = Record<string, string | number | boolean>;

function parseTomlSections(text: string): Map<string, TomlTable> {
  const sections = new Map<string, TomlTable>([['', {}]]);
  let current = sections.get('') as TomlTable;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (line === '' || line.startsWith('#')) return;
    const header = /^\[([^\[\]]+)\]$/.exec(line);
    if (header) {
      const name = (header[1] as string).split('.').map((p) => p.trim().replace(/^"(.*)"$/, '$1')).join('.');
      if (sections.has(name)) {
        throw new Error(`supabase/config.toml line ${i + 1}: section [${name}] appears twice; keep one`);
      }
      current = {};
      sections.set(name, current);
      return;
    }
    const kv = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line);
    if (!kv) return; // arrays, inline tables: not needed by these checks
    const value = (kv[2] as string).trim();
    current[kv[1] as string] = /^".*"$/.test(value)
      ? value.slice(1, -1)
      : value === 'true' || value === 'false'
      ? value === 'true'
      : /^-?\d+$/.test(value)
      ? Number(value)
      : value;
  });
  return sections;
}

// --- README endpoint table ------------------------------------------------------------------

const START = '<!-- endpoints:start -->';
const END = '<!-- endpoints:end -->';
const HEADER = ['Method', 'Path', 'Auth', 'Body', 'Success'];

interface Row {
  line: number;
  cells: string[];
}

function endpointTable(readme: string): { header: string[] | undefined; rows: Row[] } {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.trim() === START);
  const end = lines.findIndex((l) => l.trim() === END);
  if (start < 0 || end < 0 || end < start) {
    throw new Error(`README.md must keep the endpoint table between the lines "${START}" and "${END}"`);
  }
  const cellsOf = (l: string) =>
    l
      .trim()
      .replace(/^\|/, '')
      .replace(/\|$/, '')
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
  const table = lines
    .map((l, i) => ({ line: i + 1, text: l }))
    .slice(start + 1, end)
    .filter((l) => l.text.trim().startsWith('|'));
  const [head, , ...body] = table;
  return {
    header: head ? cellsOf(head.text) : undefined,
    rows: body.map((r) => ({ line: r.line, cells: cellsOf(r.text) })),
  };
}

const unticked = (s: string) => s.replace(/`/g, '').trim();

// --- describe blocks in tests/ ----------------------------------------------------------------

function testFiles(dir: string): string[] {
  return readdirSync(path(dir)).flatMap((name) => {
    const p = `${dir}/${name}`;
    if (statSync(path(p)).isDirectory()) return testFiles(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The titles of every describe('...') in a suite: quoted in ', " or `; lines that are comments skipped. */
function describeTitles(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => !/^\s*(\/\/|\*)/.test(l))
    .flatMap((l) => [...l.matchAll(/\bdescribe\(\s*(['"`])(.*?)\1/g)].map((m) => m[2] as string));
}

// ---------------------------------------------------------------------------------------------

describe('supabase/functions: one folder per operation', () => {
  it('has at least one function', () => {
    expect(functionNames.length, 'supabase/functions has no folders').toBeGreaterThan(0);
  });

  it.each(functionNames)('%s: folder name is lower-case kebab-case (the local server skips other names)', (name) => {
    expect(
      /^[a-z0-9]+(-[a-z0-9]+)*$/.test(name),
      `rename supabase/functions/${name}: scripts/lib/server.ts only serves folders named like "escrow-create"`,
    ).toBe(true);
  });

  it.each(functionNames)('%s: index.ts serves handler.ts with Deno.serve', (name) => {
    const index = `supabase/functions/${name}/index.ts`;
    expect(existsSync(path(index)), `create ${index}: import handler from './handler.ts'; Deno.serve(handler);`).toBe(
      true,
    );
    const text = read(index);
    expect(text.includes('Deno.serve('), `${index} must call Deno.serve(handler)`).toBe(true);
    expect(/from\s+['"]\.\/handler\.ts['"]/.test(text), `${index} must import its handler from './handler.ts'`).toBe(
      true,
    );
  });

  it.each(functionNames)('%s: handler.ts default-exports an endpoint() named after the folder', async (name) => {
    const file = `supabase/functions/${name}/handler.ts`;
    expect(existsSync(path(file)), `create ${file} exporting default endpoint({ name: '${name}', ... })`).toBe(true);
    const meta = await metaOf(name);
    expect(meta, `${file} must default-export the result of endpoint({...}) from shared/core/endpoint.ts`)
      .toBeDefined();
    expect(meta?.name, `${file}: endpoint({ name }) must be '${name}', the folder name`).toBe(name);
  });

  it("has each operation's tests in a describe block titled exactly with its name, somewhere in tests/", () => {
    const titles = new Set(testFiles('tests').flatMap((f) => describeTitles(read(f))));
    const missing = functionNames.filter((n) => !titles.has(n));
    expect(
      missing,
      `no tests/**/*.test.ts has a describe block titled exactly with the name of: ${missing.join(', ')}. ` +
        `Put the tests that exercise each one inside describe('<name>', () => { ... }), the folder name and nothing ` +
        `else; keep what a block says by nesting it: describe('<name>', () => { describe('validation', ...) })`,
    ).toEqual([]);
  });
});

describe('supabase/config.toml', () => {
  const text = read('supabase/config.toml');
  const sections = parseTomlSections(text);
  const declared = [...sections.keys()]
    .filter((k) => /^functions\.[^.]+$/.test(k))
    .map((k) => k.slice('functions.'.length))
    .sort();

  it('names the project and the local ports', () => {
    expect(sections.get('')?.project_id, 'supabase/config.toml: set project_id = "escrow-service"').toBe(
      'escrow-service',
    );
    expect(sections.get('api')?.port, 'supabase/config.toml: [api] port = 54321').toBe(54321);
    expect(sections.get('db')?.port, 'supabase/config.toml: [db] port = 54322').toBe(54322);
    expect(sections.get('db')?.major_version, 'supabase/config.toml: [db] major_version = 17').toBe(17);
  });

  it.each(functionNames)('has a [functions.%s] block with verify_jwt = false', (name) => {
    const block = sections.get(`functions.${name}`);
    const wanted = `add to supabase/config.toml:\n[functions.${name}]\nenabled = true\nverify_jwt = false\n` +
      `import_map = "../deno.json"\nentrypoint = "./functions/${name}/index.ts"`;
    expect(block, wanted).toBeDefined();
    expect(block?.verify_jwt, `[functions.${name}]: verify_jwt must be false (functions check our own tokens)`).toBe(
      false,
    );
    expect(block?.enabled, `[functions.${name}]: set enabled = true`).toBe(true);
    expect(block?.import_map, `[functions.${name}]: import_map must be "../deno.json" (the one import map)`).toBe(
      '../deno.json',
    );
    expect(block?.entrypoint, `[functions.${name}]: entrypoint must be "./functions/${name}/index.ts"`).toBe(
      `./functions/${name}/index.ts`,
    );
  });

  it('has no block for a function that does not exist', () => {
    const stale = declared.filter((n) => !functionNames.includes(n));
    expect(
      stale,
      `remove these [functions.<name>] blocks from supabase/config.toml (no such folder): ${stale.join(', ')}`,
    ).toEqual([]);
  });
});

describe('README.md', () => {
  const readme = read('README.md');

  it('shows the two commands on its first screen', () => {
    const first = readme.split('\n').slice(0, 30).join('\n');
    expect(first.includes('npm ci && npm start'), 'README.md: put `npm ci && npm start` in the first 30 lines').toBe(
      true,
    );
    expect(/\bnpm test\b/.test(first), 'README.md: put `npm test` in the first 30 lines').toBe(true);
  });

  it(`keeps the endpoint table header as | ${HEADER.join(' | ')} |`, () => {
    const { header } = endpointTable(readme);
    expect(header, `README.md: the first table row between the markers must be | ${HEADER.join(' | ')} |`).toEqual(
      HEADER,
    );
  });

  it('has exactly one endpoint row per function, and none for functions that do not exist', () => {
    const { rows } = endpointTable(readme);
    const paths = rows.map((r) => unticked(r.cells[1] ?? ''));
    const missing = functionNames.filter((n) => !paths.includes(`/${n}`));
    const unknown = paths.filter((p) => !functionNames.includes(p.replace(/^\//, '')));
    const twice = paths.filter((p, i) => paths.indexOf(p) !== i);
    expect(
      missing,
      `README.md endpoint table: add a row | METHOD | \`/<name>\` | none, bearer or admin | fields | status | for: ${
        missing.join(', ')
      }`,
    ).toEqual([]);
    expect(
      unknown,
      `README.md endpoint table: remove rows for paths with no folder in supabase/functions: ${unknown.join(', ')}`,
    ).toEqual([]);
    expect(twice, `README.md endpoint table: these paths have more than one row: ${twice.join(', ')}`).toEqual([]);
  });

  it.each(functionNames)('%s: its row matches the handler (method, auth, success status)', async (name) => {
    const meta = await metaOf(name);
    const row = endpointTable(readme).rows.find((r) => unticked(r.cells[1] ?? '') === `/${name}`);
    expect(row, `README.md endpoint table has no row for /${name}`).toBeDefined();
    if (!row || !meta) return;
    const [method, , auth, , success] = row.cells.map(unticked);
    const where = `README.md line ${row.line} (/${name})`;
    expect(row.cells.length, `${where}: a row needs exactly 5 cells: ${HEADER.join(', ')}`).toBe(5);
    expect(method, `${where}: Method must be ${meta.method}, as in its handler.ts`).toBe(meta.method);
    const wantedAuth = AUTH_COLUMN[meta.auth];
    expect(auth, `${where}: Auth must be "${wantedAuth}" (handler auth is '${meta.auth}')`).toBe(wantedAuth);
    expect(success, `${where}: Success must be ${meta.status}, the handler's success status`).toBe(String(meta.status));
  });
});

describe('deno.json import map', () => {
  const deno = JSON.parse(read('deno.json')) as { imports?: Record<string, string> };
  const pkg = JSON.parse(read('package.json')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const versions: Record<string, string> = { ...pkg.devDependencies, ...pkg.dependencies };
  const imports = deno.imports ?? {};

  it.each(['zod', 'jose', 'postgres', '@supabase/supabase-js'])(
    'maps %s to npm:<name>@<the version in package.json>',
    (name) => {
      const version = pkg.dependencies?.[name];
      expect(version, `package.json: "${name}" must be a dependency with an exact version`).toBeDefined();
      expect(imports[name], `deno.json imports: set "${name}": "npm:${name}@${version}" (package.json pins ${version})`)
        .toBe(
          `npm:${name}@${version}`,
        );
    },
  );

  it('pins every npm: import to the exact version package.json installs', () => {
    const wrong = Object.entries(imports)
      .map(([key, spec]) => ({ key, spec, m: /^npm:((?:@[^/@]+\/)?[^@/]+)@([^/]+)(\/.*)?$/.exec(spec) }))
      .filter(({ m }) => m)
      .filter(({ m }) => versions[m![1] as string] !== m![2])
      .map(({ key, spec, m }) =>
        versions[m![1] as string]
          ? `"${key}": "${spec}" should be npm:${m![1]}@${versions[m![1] as string]}`
          : `"${key}": "${spec}" names a package that package.json does not install`
      );
    expect(wrong, `deno.json imports out of step with package.json:\n${wrong.join('\n')}`).toEqual([]);
  });
});

/** The variables the zod schema of shared/core/config.ts reads: every one a deployment may set. */
function configVariables(): string[] {
  const config = read('shared/core/config.ts');
  const schemaPart = config.slice(config.indexOf('z\n  .object({'), config.indexOf('.superRefine'));
  const names = [...schemaPart.matchAll(/^\s+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+):/gm)].map((m) => m[1] as string);
  expect(names.length, 'could not find the zod schema in shared/core/config.ts; update this test').toBeGreaterThan(5);
  return names;
}

describe('.env.example', () => {
  const example = read('.env.example');
  const documented = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string));

  it('documents every variable that shared/core/config.ts and scripts/start.ts read', () => {
    const fromConfig = configVariables();
    const start = read('scripts/start.ts');
    const fromStart = [
      ...[...start.matchAll(/Deno\.env\.get\('([A-Z0-9_]+)'\)/g)].map((m) => m[1] as string),
      ...[...start.matchAll(/\bport\('([A-Z0-9_]+)'/g)].map((m) => m[1] as string),
    ];
    const missing = [...new Set([...fromConfig, ...fromStart])].filter((v) => !documented.has(v)).sort();
    expect(missing, `.env.example: add a line NAME=<local default> with a one-line comment for: ${missing.join(', ')}`)
      .toEqual([]);
  });
});

describe("README.md's deploy steps", () => {
  const readme = read('README.md');
  const deploy = readme.slice(readme.indexOf('## Deploying to Supabase'), readme.indexOf('## The npm lock file'));

  it('name, in the variables table, every variable shared/core/config.ts reads', () => {
    const start = deploy.indexOf('| variable | value in production |');
    expect(start, 'README.md: keep the table "| variable | value in production |" in the deploy steps').toBeGreaterThan(
      0,
    );
    const lines = deploy.slice(start).split('\n').map((l) => l.trim());
    const end = lines.findIndex((l) => !l.startsWith('|'));
    const rows = lines.slice(0, end < 0 ? lines.length : end);
    const named = new Set(
      rows.flatMap((r) => [...(r.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)]).map((m) => m[1]),
    );
    const missing = configVariables().filter((v) => !named.has(v));
    expect(
      missing,
      `README.md deploy variables table: add a row (its production value, or "unset") for: ${missing.join(', ')}`,
    )
      .toEqual([]);
  });

  it('state how many functions there are, the plan they need, and a budget the count stays within', () => {
    // the functions the CLI deploys: folders of supabase/functions, not a shared one (_shared and the like)
    const deployed = functionNames.filter((n) => !n.startsWith('_') && !n.startsWith('.'));
    const budget = /budget of \*\*(\d+) functions\*\*/.exec(deploy);
    expect(budget, 'README.md deploy steps: state "a budget of **N functions**"').not.toBeNull();
    const limit = Number(budget![1]);
    expect(
      deployed.length,
      `supabase/functions holds ${deployed.length} functions, past the budget of ${limit} the README states: ` +
        'check the plan the count needs and raise the budget in README.md (functions and the plan)',
    ).toBeLessThanOrEqual(limit);
    // the count the README states is the real one, within the room the budget leaves
    const stated = /\*\*(\d+) functions\*\* today/.exec(deploy);
    expect(stated, 'README.md deploy steps: state "**N functions** today"').not.toBeNull();
    expect(Number(stated![1]), 'README.md: the number of functions stated is stale').toBe(deployed.length);
  });
});
