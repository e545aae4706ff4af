// Self-contained docs (docs/decisions.md#self-contained-documentation): no comment or doc of the
// repository cites a file outside it, an issue number or a person's role, and every path and
// docs/<file>.md#<anchor> it names exists. The checks are the pure functions of
// scripts/lib/citations.ts: the first block runs them over every file of the repository, the second
// shows on small samples that each rule fires on a bad text and stays quiet on a good one.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, checkedAs, commentsOnly, findings, type Repo, type Rule } from '../../scripts/lib/citations.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SKIPPED = new Set(['node_modules', '.git', '.data', '.local']);

/** The folders .gitignore keeps out ('clients/typescript/dist/'): not walked, but they may be named. */
const ignored = readFileSync(`${root}.gitignore`, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l.endsWith('/') && !l.includes('*'));

function walk(dir = ''): string[] {
  return readdirSync(root + dir, { withFileTypes: true }).flatMap((e) => {
    const path = dir + e.name;
    if (e.isDirectory()) return SKIPPED.has(e.name) || ignored.includes(`${path}/`) ? [] : walk(`${path}/`);
    return e.isFile() ? [path] : [];
  });
}

describe('every comment and doc of the repository', () => {
  const files = walk();
  const repo: Repo = { files, ignored, read: (p) => readFileSync(root + p, 'utf8') };
  const checked = files.filter((f) => checkedAs(f));
  const all = checked.flatMap((file) => findings(repo, file, repo.read(file)).map((f) => ({ file, ...f })));

  it('are found (code, docs, config, generated docs), applied migrations aside', () => {
    const expected = [
      'README.md',
      'docs/decisions.md',
      'docs/api/openapi.json',
      'shared/core/db.ts',
      'supabase/config.toml',
    ];
    expect(expected.filter((f) => !checked.includes(f))).toEqual([]);
    expect(checked.filter((f) => f.startsWith('supabase/migrations/'))).toEqual([]);
  });

  it.each<[Rule, string]>([
    ['outside-file', 'cite no file outside the repository (the design file, the spec by path, a relative path out)'],
    ['issue-number', 'name no issue number'],
    ['role', "cite no person's role as the authority for a decision"],
    ['missing-path', 'name only repository paths that exist'],
    ['missing-anchor', 'cite only docs/<file>.md#<anchor> headings that exist'],
  ])('%s: %s', (rule) => {
    const found = all.filter((f) => f.rule === rule).map((f) => `${f.file}:${f.line}: ${f.found}\n    ${f.fix}`);
    expect(found, `${found.length} to fix:\n${found.join('\n')}`).toEqual([]);
  });
});

describe('the rules, on samples', () => {
  const sample: Repo = {
    files: [
      'README.md',
      'docs/decisions.md',
      'docs/kyc.md',
      'shared/core/db.ts',
      'shared/escrow/schema.ts',
      'supabase/migrations/20261121000100_platform.sql',
    ],
    read: (p) => (p === 'docs/kyc.md' ? '# KYC\n\n## Tiers and their limits\n' : '# Decisions\n'),
    ignored: ['clients/typescript/dist/'],
  };
  const found = (path: string, text: string) => findings(sample, path, text).map((f) => `${f.rule} ${f.found}`);

  it.each<[string, string, string, string[]]>([
    ['outside-file', 'shared/core/x.ts', '// the limits (DESIGN §8.4)\n', ['outside-file DESIGN', 'outside-file §8.4']],
    ['outside-file', 'README.md', 'See ../shared/DESIGN.md.', [
      'outside-file DESIGN.md',
      'outside-file ../shared/DESIGN.md',
    ]],
    ['outside-file', 'docs/kyc.md', 'As spec/escrow-service-interface.md says', [
      'outside-file spec/escrow-service-interface.md',
    ]],
    ['outside-file', 'tests/x.test.ts', '/* the SQL of SQL-FOR-MERGE.md */', ['outside-file SQL-FOR-MERGE.md']],
    ['outside-file', 'README.md', 'Run ../bench/run.sh', ['outside-file ../bench/run.sh']],
    ['issue-number', 'docs/kyc.md', 'Since issue 12 (and issues 9 and 10; see #14).', [
      'issue-number issue 12',
      'issue-number issues 9 and 10',
      'issue-number #14',
    ]],
    ['issue-number', 'tests/x.test.ts', '// Value only for what is confirmed (issue 8, item 2)\n', [
      'issue-number issue 8',
    ]],
    ['role', 'docs/kyc.md', "The CEO's harness; as the code reviewer asked; the user's design card.", [
      'role CEO',
      'role design card',
      'role the code reviewer',
    ]],
    ['role', 'shared/core/x.ts', '// kept, as the reviewer asked\n', ['role the reviewer asked']],
    [
      'missing-path',
      'shared/core/x.ts',
      '// shared/enums.ts, shared/schemas/<area>.ts, supabase/migrations/*_escrow.sql\n',
      [
        'missing-path shared/enums.ts',
        'missing-path shared/schemas/<area>.ts',
        'missing-path supabase/migrations/*_escrow.sql',
      ],
    ],
    ['missing-path', 'docs/kyc.md', 'See [the tiers](tiers.md).', ['missing-path tiers.md']],
    ['missing-anchor', 'shared/kyc/x.ts', '// docs/kyc.md#tiers\n', ['missing-anchor docs/kyc.md#tiers']],
    ['missing-anchor', 'docs/decisions.md', '# Decisions\n[x](kyc.md#limits), [y](#money)', [
      'missing-anchor kyc.md#limits',
      'missing-anchor #money',
    ]],
  ])('%s fires: %s %j', (_rule, path, text, expected) => {
    expect(found(path, text)).toEqual(expected);
  });

  it.each<[string, string, string]>([
    [
      'outside-file',
      'shared/core/x.ts',
      "// the spec's Escrow\nimport { sql } from '../../shared/core/db.ts';\nconst s = 'DESIGN §8';\n",
    ],
    ['outside-file', 'docs/kyc.md', '```ts\nimport { endpoint } from "../../../shared/core/db.ts";\n```\n'],
    ['issue-number', 'scripts/x.sh', '#!/usr/bin/env bash\n# 1. first\necho "${#args[@]}"\n'],
    [
      'issue-number',
      'docs/kyc.md',
      '## 8.4 Tiers\n[t](kyc.md#tiers-and-their-limits), colour: #000, &#39;, porsager/postgres#1208',
    ],
    ['role', 'docs/kyc.md', "The reviewer and the reviewee read the row; the reviewer's last name is shown."],
    ['missing-path', 'docs/kyc.md', 'shared/core/db.ts, shared/core/, shared/<area>/schema.ts, shared/*/schema.ts.'],
    [
      'missing-path',
      'shared/core/x.ts',
      '// supabase/migrations/<timestamp>_*.sql, clients/typescript/dist/index.js, shared/core\n',
    ],
    ['missing-anchor', 'shared/kyc/x.ts', '// docs/kyc.md#tiers-and-their-limits, README.md\n'],
    [
      'missing-anchor',
      'docs/kyc.md',
      '# KYC\n## Tiers and their limits\n[up](#tiers-and-their-limits) [d](decisions.md#decisions)',
    ],
  ])('%s stays quiet: %s %j', (_rule, path, text) => {
    expect(found(path, text)).toEqual([]);
  });

  it('exempts applied migrations and the generated schema, not other SQL', () => {
    const text = '-- DESIGN §8.4, issue 12\n';
    expect(found('supabase/migrations/20261121000100_platform.sql', text)).toEqual([]);
    expect(found('supabase/schema.sql', text)).toEqual([]);
    expect(found('scripts/sql/local-bootstrap.sql', text)).toHaveLength(3);
  });

  it('reads only the comments of code, where TypeScript finds them', () => {
    const text = "const u = 'http://x'; // a note\nconst r = /\\/\\//; /* b */\n";
    expect(commentsOnly('x.ts', text).split('\n').map((l) => l.trim())).toEqual(['// a note', '/* b */', '']);
  });

  it("computes GitHub's heading anchors, code blocks aside", () => {
    const markdown =
      '# Decisions\n## 8.4 KYC tiers and limits\n### `kyc-status`\n## Money\n## Money\n```sh\n# no\n```\n';
    expect([...anchorsOf(markdown)]).toEqual([
      'decisions',
      '84-kyc-tiers-and-limits',
      'kyc-status',
      'money',
      'money-1',
    ]);
  });
});
