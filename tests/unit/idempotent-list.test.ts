// Which endpoints honour Idempotency-Key is a deliberate, documented list derived from the endpoint
// definitions: every POST or PATCH a signed-in user (or admin) calls states `idempotent: true` (or
// 'provider', or a function of the body) or `false` in
// its handler.ts, and the README's table (between <!-- idempotent:start --> and
// <!-- idempotent:end -->) has one row per such endpoint, saying the same, with the reason.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (p: string) => readFileSync(`${root}${p}`, 'utf8');

const START = '<!-- idempotent:start -->';
const END = '<!-- idempotent:end -->';

const names = readdirSync(`${root}supabase/functions`)
  .filter((n) => statSync(`${root}supabase/functions/${n}`).isDirectory())
  .sort();

interface Definition {
  name: string;
  file: string;
  meta: EndpointMeta & { idempotent?: boolean };
  /** every `idempotent: true|false` written in the handler */
  stated: boolean[];
}

async function definitionOf(name: string): Promise<Definition> {
  const file = `supabase/functions/${name}/handler.ts`;
  const mod = await import(pathToFileURL(`${root}${file}`).href);
  const meta = (mod.default as { meta: Definition['meta'] }).meta;
  // true, 'provider' (it calls a provider) or a function of the body choosing one of the two
  const stated = [...read(file).matchAll(/\bidempotent:\s*(true|false|'provider'|\(body\) =>)/g)].map((m) =>
    m[1] !== 'false'
  );
  return { name, file, meta, stated };
}

const definitions = await Promise.all(names.map(definitionOf));
/**
 * Only a signed-in user's changes can take a key: keys are kept per user (an admin is a user), and a
 * GET changes nothing.
 */
const eligible = definitions.filter((d) => d.meta.auth !== 'none' && d.meta.method !== 'GET');
const others = definitions.filter((d) => !eligible.includes(d));

function readmeTable(): { line: number; path: string; key: string; why: string }[] {
  const lines = read('README.md').split('\n');
  const start = lines.findIndex((l) => l.trim() === START);
  const end = lines.findIndex((l) => l.trim() === END);
  if (start < 0 || end < start) {
    throw new Error(`README.md must keep the Idempotency-Key table between ${START} and ${END}`);
  }
  const rows = lines
    .map((text, i) => ({ line: i + 1, text: text.trim() }))
    .slice(start + 1, end)
    .filter((l) => l.text.startsWith('|'));
  const [head, , ...body] = rows;
  const cells = (t: string) => t.replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
  const columns = head && cells(head.text);
  expect(columns, 'README.md: the Idempotency-Key table has the columns Endpoint | Idempotency-Key | Why').toEqual([
    'Endpoint',
    'Idempotency-Key',
    'Why',
  ]);
  return body.map((r) => {
    const [path = '', key = '', why = ''] = cells(r.text);
    return { line: r.line, path: path.replace(/`/g, ''), key, why };
  });
}

/**
 * Creations whose answer is a secret shown once and never stored anywhere, so no Idempotency-Key
 * may keep it: a repeat makes another one (a stream ticket, a merchant's API key).
 */
const SHOWN_ONCE = new Set([
  'events-ticket',
  'merchant-key-create',
  'merchant-webhook-create',
  'merchant-webhook-rotate-secret',
]);

describe('the endpoint definitions say whether they are idempotent', () => {
  it('covers the endpoints a signed-in user changes something with', () => {
    expect(eligible.length).toBeGreaterThan(0);
  });

  it.each(eligible.map((d) => [d.name, d] as const))('%s states idempotent: true or false, once', (_name, d) => {
    expect(
      d.stated,
      `${d.file}: add \`idempotent: true\` (it moves money or creates something) or \`idempotent: false\` ` +
        '(a repeat changes nothing more), and its row in the README Idempotency-Key table',
    ).toHaveLength(1);
  });

  it.each(others.map((d) => [d.name, d] as const))('%s (no user, or a GET) does not mention idempotent', (_name, d) => {
    expect(d.stated, `${d.file}: only a POST or PATCH with auth 'user' or 'admin' can honour Idempotency-Key`).toEqual(
      [],
    );
  });

  it.each(
    eligible.filter((d) => d.meta.status === 201 && !SHOWN_ONCE.has(d.name)).map((d) => [d.name, d] as const),
  )(
    '%s creates something (201), so it is idempotent',
    (_name, d) => {
      expect(d.stated, `${d.file}: a creation must say idempotent: true`).toEqual([true]);
    },
  );

  it.each([...SHOWN_ONCE].map((name) => [name] as const))(
    '%s makes a secret that is never kept, so it is not idempotent',
    (name) => {
      const d = definitions.find((x) => x.name === name);
      expect(d?.stated, `${name}: its answer is a secret no Idempotency-Key may keep`).toEqual([false]);
    },
  );

  it.each(definitions.map((d) => [d.name, d] as const))('%s: meta.idempotent, when present, agrees', (_name, d) => {
    // shared/core/endpoint.ts may expose the flag on `meta`; then it must be what the handler states
    if (d.meta.idempotent !== undefined) expect(d.meta.idempotent).toBe(d.stated[0] ?? false);
  });
});

describe('README.md: the Idempotency-Key table', () => {
  const rows = readmeTable();

  it('has one row per such endpoint, in path order', () => {
    expect(
      rows.map((r) => r.path),
      'README.md Idempotency-Key table: one row per POST or PATCH with auth user or admin, sorted by path',
    ).toEqual(eligible.map((d) => `/${d.name}`).sort());
  });

  it.each(eligible.map((d) => [d.name, d] as const))('%s: says what its definition says, and why', (name, d) => {
    const row = rows.find((r) => r.path === `/${name}`);
    expect(row, `README.md: add | \`/${name}\` | yes or no | why | to the Idempotency-Key table`).toBeDefined();
    expect(row?.key, `README.md line ${row?.line}: ${d.file} says idempotent: ${d.stated[0]}`).toBe(
      d.stated[0] ? 'yes' : 'no',
    );
    expect(row?.why.length, `README.md line ${row?.line}: say why`).toBeGreaterThan(10);
  });
});
