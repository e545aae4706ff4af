// The dependency rule (docs/architecture.md#the-dependency-rule): shared/core imports no area, and
// nothing a function deploys imports scripts/ or tests/. Imports are read as the Supabase CLI reads
// them when it uploads a function (scripts/lib/imports.ts), comments included, so what is checked
// is what would be shipped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importSpecifiers, walkImports } from '../../scripts/lib/imports.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const importMap = (JSON.parse(readFileSync(`${root}deno.json`, 'utf8')) as { imports: Record<string, string> }).imports;

function tsFiles(dir: string): string[] {
  return readdirSync(`${root}${dir}`).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(`${root}${path}`).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Each relative import of each file, as a path from the repository root. */
function edges(files: readonly string[], read: (file: string) => string): { from: string; to: string }[] {
  return files.flatMap((from) =>
    importSpecifiers(read(from))
      .filter((s) => s.startsWith('./') || s.startsWith('../'))
      .map((s) => ({ from, to: posix.normalize(posix.join(posix.dirname(from), s)) }))
  );
}

/** The area a file of shared/ belongs to ('core', 'escrow', ...), or null outside shared/. */
const areaOf = (file: string) => /^shared\/([^/]+)\//.exec(file)?.[1] ?? null;

/** The edges that break the rule: core importing an area, shared/ importing scripts/ or tests/. */
function violations(list: readonly { from: string; to: string }[]): string[] {
  return list.flatMap(({ from, to }) => {
    if (areaOf(from) === 'core' && areaOf(to) !== 'core') {
      return [`${from} imports ${to}: shared/core imports no area (move the code, or have the area pass it in)`];
    }
    if (areaOf(from) !== null && /^(scripts|tests)\//.test(to)) {
      return [`${from} imports ${to}: deployed code imports nothing from scripts/ or tests/`];
    }
    return [];
  });
}

const shared = tsFiles('shared');
const functions = readdirSync(`${root}supabase/functions`).filter((n) =>
  statSync(`${root}supabase/functions/${n}`).isDirectory()
);

describe('the dependency rule', () => {
  it('holds in shared/: core imports no area; nothing imports scripts/ or tests/', () => {
    expect(violations(edges(shared, (f) => readFileSync(`${root}${f}`, 'utf8')))).toEqual([]);
  });

  it('holds for every function: nothing it deploys comes from scripts/ or tests/', () => {
    const found = functions.flatMap((name) =>
      walkImports(root, `supabase/functions/${name}/index.ts`, importMap).files
        .filter((f) => /^(scripts|tests)\//.test(f))
        .map((f) => `${name} deploys ${f}`)
    );
    expect(found, 'a function must not reach scripts/ or tests/ through its imports').toEqual([]);
  });

  it('core is a folder of its own and every other folder of shared/ is an area', () => {
    expect(shared.filter((f) => areaOf(f) === null), 'every file of shared/ is in shared/core or an area folder')
      .toEqual([]);
    expect(shared.some((f) => areaOf(f) === 'core')).toBe(true);
  });

  it('finds each kind of violation in a sample', () => {
    const sample = {
      'shared/core/endpoint.ts':
        `import { KYC_LIMIT_EXCEEDED } from '../kyc/refusals.ts';\nimport { log } from './log.ts';`,
      'shared/core/db.ts': `// was: import { AuthUser } from '../auth/session.ts';\nimport postgres from 'postgres';`,
      'shared/escrow/escrow.ts': `import { openApiDocument } from '../../scripts/lib/spec/openapi.ts';`,
      'shared/money/wallet.ts':
        `import { asUser } from '../core/db.ts';\nimport { KYC_LIMIT_EXCEEDED } from '../kyc/refusals.ts';`,
    } as Record<string, string>;
    const found = violations(edges(Object.keys(sample), (f) => sample[f] as string));
    expect(found).toEqual([
      'shared/core/endpoint.ts imports shared/kyc/refusals.ts: shared/core imports no area (move the code, or have the area pass it in)',
      // an import in a comment is uploaded by the CLI all the same, so it counts
      'shared/core/db.ts imports shared/auth/session.ts: shared/core imports no area (move the code, or have the area pass it in)',
      'shared/escrow/escrow.ts imports scripts/lib/spec/openapi.ts: deployed code imports nothing from scripts/ or tests/',
    ]);
  });
});
