// The catalog of refusals (shared/refusals/catalog.ts, docs/errors.md): each code declared once, in
// snake_case, with its words, advice and an example that renders; every endpoint declares only
// refusals of the catalog; and SQL written since refusals became facts raises no English.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../shared/refusals/catalog.ts';
import { loadEndpointMetas } from '../support/endpoints.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The first migration written after refusals became facts: from it on, SQL raises no English. */
const FACTS_FROM = '20261127030000';

describe('the catalog of refusals', () => {
  it('declares each code once, in snake_case, with a status of a refusal', () => {
    const codes = CATALOG.map((r) => r.code);
    expect(codes.filter((c, i) => codes.indexOf(c) !== i)).toEqual([]);
    for (const r of CATALOG) {
      expect(r.code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(r.code.startsWith('unclassified_')).toBe(false);
      expect(r.status >= 400 && r.status <= 599, r.code).toBe(true);
    }
  });

  it('gives each refusal its when, its advice and an example whose message renders', () => {
    for (const r of CATALOG) {
      expect(r.when.length, r.code).toBeGreaterThan(10);
      expect(r.then.length, r.code).toBeGreaterThan(10);
      const message = r.message(r.example);
      expect(message.trim().length, r.code).toBeGreaterThan(0);
      expect(message, r.code).not.toMatch(/undefined|NaN|\[object Object\]/);
    }
  });

  it("every refusal an endpoint declares is the catalog's own object", async () => {
    const byCode = new Map(CATALOG.map((r) => [r.code, r]));
    for (const meta of await loadEndpointMetas()) {
      for (const r of meta.refusals) {
        if (r.code.startsWith('unclassified_')) continue; // transitional, until every area has codes
        expect(byCode.get(r.code), `${meta.name} declares ${r.code}, which the catalog does not list`).toBe(r);
      }
    }
  });
});

describe('SQL refusals since they became facts', () => {
  const files = readdirSync(`${root}supabase/migrations`).filter((f) => f.endsWith('.sql') && f >= FACTS_FROM);

  it('raise no English: a refusal is private.refuse(status, code, facts)', () => {
    expect(files.length).toBeGreaterThan(0);
    const offending: string[] = [];
    for (const file of files) {
      const sql = readFileSync(`${root}supabase/migrations/${file}`, 'utf8');
      // a refusal raised by hand: an ES<status> errcode outside private.refuse itself
      for (const m of sql.matchAll(/raise\s+exception\s+'([^']*)'[^;]*errcode\s*=\s*'ES\d{3}'/gi)) {
        if (m[1] !== '%') offending.push(`${file}: raise exception '${m[1]}'`);
      }
      for (const m of sql.matchAll(/private\.refuse\(\s*\d{3}\s*,\s*'([^']*)'/g)) {
        if (!/^[a-z][a-z0-9_]*$/.test(m[1] as string)) offending.push(`${file}: private.refuse code '${m[1]}'`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('names only codes the catalog lists', () => {
    const codes = new Set(CATALOG.map((r) => r.code));
    const unknown: string[] = [];
    for (const file of files) {
      const sql = readFileSync(`${root}supabase/migrations/${file}`, 'utf8');
      for (const m of sql.matchAll(/private\.refuse\(\s*\d{3}\s*,\s*'([a-z0-9_]+)'/g)) {
        if (!codes.has(m[1] as string)) unknown.push(`${file}: ${m[1]}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
