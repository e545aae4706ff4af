// `npm run deploy:check` (a step of `npm test`): each function as `supabase functions deploy` ships
// it. The CLI uploads an entry's files found by walking its relative imports (scripts/lib/imports.ts
// does the same walk), plus the import map, `deno.json`, which the edge runtime then loads as the
// Deno configuration; it uploads no node_modules and no package.json. So:
//   1. every [functions.<name>] of supabase/config.toml: the files its entry's walk collects;
//   2. those files (all functions together) and deno.json copied into an emptied temporary folder;
//   3. one `deno check` of every entry there: npm packages come from the npm registry (the one npm
//      is configured with) into Deno's cache, never from node_modules;
//   4. `deno info` of the same entries: every file Deno resolves for an entry must be one the walk
//      collected for that entry, or the deployed function would miss it.
// Any failure is printed with the function and file concerned, and the exit code is 1.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { walkImports } from './lib/imports.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const deno = Deno.execPath();
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
const problems: string[] = [];

interface Fn {
  name: string;
  entry: string; // relative to the repository root
  importMap: string;
  files: string[];
}

// ---- 1. the functions and their files -----------------------------------------------------------

/** [functions.<name>] blocks of supabase/config.toml: entrypoint and import_map (relative to supabase/). */
function configuredFunctions(): Map<string, Record<string, string>> {
  const blocks = new Map<string, Record<string, string>>();
  let current: Record<string, string> | undefined;
  for (const raw of readFileSync(join(root, 'supabase/config.toml'), 'utf8').split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      const m = /^functions\.("?)([^"]+)\1$/.exec(header[1] as string);
      current = m ? {} : undefined;
      if (m) blocks.set(m[2] as string, current as Record<string, string>);
      continue;
    }
    const kv = /^([a-z_]+)\s*=\s*"(.*)"$/.exec(line);
    if (current && kv) current[kv[1] as string] = kv[2] as string;
  }
  return blocks;
}

const fromSupabase = (p: string) => posix.normalize(posix.join('supabase', p));
const config = configuredFunctions();
const folders = readdirSync(join(root, 'supabase/functions'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);
const fns: Fn[] = [];
for (const name of [...new Set([...folders, ...config.keys()])].sort()) {
  const block = config.get(name);
  if (!block?.entrypoint || !block.import_map) {
    problems.push(`${name}: no [functions.${name}] block with entrypoint and import_map in supabase/config.toml`);
    continue;
  }
  const importMap = fromSupabase(block.import_map);
  let imports: Record<string, string> = {};
  try {
    const parsed = JSON.parse(readFileSync(join(root, importMap), 'utf8')) as { imports?: Record<string, string> };
    imports = parsed.imports ?? {};
  } catch (err) {
    problems.push(`${name}: import map ${importMap} cannot be read: ${err instanceof Error ? err.message : err}`);
    continue;
  }
  const entry = fromSupabase(block.entrypoint);
  if (!existsSync(join(root, entry))) {
    problems.push(`${name}: entrypoint ${entry} does not exist`);
    continue;
  }
  const walk = walkImports(root, entry, imports);
  for (const o of walk.outside) {
    problems.push(`${name}: ${o.from} imports ${o.specifier}, outside the project: not uploaded`);
  }
  // the CLI only warns; a real import of a missing file also fails deno check below
  for (const m of walk.missing) console.log(`  WARN ${name}: ${m.from} names ${m.specifier}, which does not exist`);
  fns.push({ name, entry, importMap, files: walk.files });
}
const union = [...new Set(fns.flatMap((f) => [...f.files, f.importMap]))].sort();
const sizes = fns.map((f) => f.files.length);
console.log(
  `${fns.length} functions from supabase/config.toml: ${Math.min(...sizes)}-${Math.max(...sizes)} files each ` +
    `(the CLI's walk of relative imports), ${union.length} distinct files with the import map (${elapsed()})`,
);

// ---- 2. an emptied folder with those files only ---------------------------------------------------

// The same path on every run (emptied first), so Deno's type-check cache can skip unchanged files.
const tag = createHash('sha256').update(root).digest('hex').slice(0, 10);
const dir = join(tmpdir(), `escrow-deploy-check-${tag}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
for (const f of union) {
  mkdirSync(dirname(join(dir, f)), { recursive: true });
  copyFileSync(join(root, f), join(dir, f));
}
// Deno looks for package.json and deno.json upwards from the folder: none may be found there.
for (let d = dir;; d = dirname(d)) {
  for (const name of ['package.json', 'node_modules', ...(d === dir ? [] : ['deno.json', 'deno.jsonc'])]) {
    if (existsSync(join(d, name))) problems.push(`${join(d, name)} exists: the check folder must have none above it`);
  }
  if (dirname(d) === d) break;
}
console.log(`copied to ${dir} (no node_modules, no package.json) (${elapsed()})`);

// ---- 3. deno check there --------------------------------------------------------------------------

async function npmRegistry(): Promise<string> {
  const fromEnv = Deno.env.get('npm_config_registry') ?? Deno.env.get('NPM_CONFIG_REGISTRY');
  if (fromEnv) return fromEnv;
  try {
    const args = ['config', 'get', 'registry'];
    const out = await new Deno.Command('npm', { args, stdout: 'piped', stderr: 'null' }).output();
    return new TextDecoder().decode(out.stdout).trim() || 'https://registry.npmjs.org/';
  } catch {
    return 'https://registry.npmjs.org/';
  }
}
const registry = await npmRegistry();
const env: Record<string, string> = { DENO_NO_UPDATE_CHECK: '1' };
if (registry.replace(/\/$/, '') !== 'https://registry.npmjs.org') env.NPM_CONFIG_REGISTRY = registry;
const importMap = fns[0]?.importMap ?? 'deno.json';
const entries = fns.map((f) => f.entry);

if (problems.length === 0) {
  console.log(`deno check of ${entries.length} entries there, npm packages from ${registry} ...`);
  const check = await new Deno.Command(deno, {
    args: ['check', '--quiet', '--no-lock', '--config', importMap, ...entries],
    cwd: dir,
    env,
    stdout: 'inherit',
    stderr: 'inherit',
  }).output();
  if (check.code !== 0) problems.push('deno check failed in the uploaded file set (output above)');
  else console.log(`  every entry type-checks from its uploaded files and the npm registry (${elapsed()})`);
}

// ---- 4. what Deno resolves for each entry is what the CLI uploads --------------------------------

interface InfoModule {
  specifier: string;
  error?: string;
  dependencies?: { specifier: string; code?: { specifier?: string }; type?: { specifier?: string } }[];
}

if (problems.length === 0) {
  const roots = '.deploy-check-roots.ts';
  writeFileSync(join(dir, roots), entries.map((e) => `import './${e}';\n`).join(''));
  const info = await new Deno.Command(deno, {
    args: ['info', '--json', '--no-lock', '--config', importMap, roots],
    cwd: dir,
    env,
    stdout: 'piped',
    stderr: 'piped',
  }).output();
  if (info.code !== 0) {
    problems.push(`deno info failed: ${new TextDecoder().decode(info.stderr).slice(0, 2000)}`);
  } else {
    const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as { modules: InfoModule[] };
    const base = pathToFileURL(`${dir}/`).href;
    const local = (s: string | undefined) => (s?.startsWith(base) ? s.slice(base.length) : undefined);
    const edges = new Map<string, string[]>();
    for (const m of graph.modules) {
      const from = local(m.specifier);
      if (!from) continue;
      if (m.error) problems.push(`${from}: ${m.error}`);
      const to = (m.dependencies ?? []).flatMap((d) => [local(d.code?.specifier), local(d.type?.specifier)]);
      edges.set(from, to.filter((t): t is string => t !== undefined));
    }
    for (const f of fns) {
      const uploaded = new Set(f.files);
      const seen = new Set<string>();
      const stack: [string, string[]][] = [[f.entry, []]];
      while (stack.length > 0) {
        const [file, path] = stack.pop() as [string, string[]];
        if (seen.has(file)) continue;
        seen.add(file);
        if (!uploaded.has(file)) {
          // what it imports in turn is missing too: the first file is the one to fix
          const chain = [...path, file].join(' -> ');
          problems.push(`${f.name}: Deno loads ${file} (${chain}), which the CLI would not upload`);
          continue;
        }
        for (const next of edges.get(file) ?? []) stack.push([next, [...path, file]]);
      }
    }
    if (problems.length === 0) {
      console.log(`  every file Deno resolves for an entry is one the CLI uploads for it (${elapsed()})`);
    }
  }
}

if (problems.length > 0) {
  console.log(`\ndeploy check FAILED (${elapsed()}):`);
  for (const p of problems) console.log(`  - ${p}`);
  console.log(
    '  The CLI follows `import ... from` and `export ... from` whose specifier is on the same line as the\n' +
      "  keyword (or after a `{...}` list), and `import('...')` with a literal; `import type {` over several\n" +
      '  lines, or a computed import, is not followed (scripts/lib/imports.ts).',
  );
  Deno.exit(1);
}
console.log(`deploy check passed: ${fns.length} functions (${elapsed()})`);
