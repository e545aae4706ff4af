// Every operation of the OpenAPI document (docs/api/openapi.json) says, beside its one-line
// summary, who may call it, in which states, and what it changes: the `description` of its
// `endpoint({...})` (supabase/functions/<name>/handler.ts), which scripts/lib/spec/openapi.ts copies
// into the operation. These tests fail when a function has none, or one too short to say it, when
// it only repeats the summary, when it lists refusal codes (the responses list those, per status),
// or when the committed document lacks it.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { answerRefusals } from '../../scripts/lib/spec/openapi.ts';
import { endpointMeta } from '../support/responses.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
// deno-lint-ignore no-explicit-any -- a parsed JSON document, read by path below
const committed = JSON.parse(readFileSync(`${root}docs/api/openapi.json`, 'utf8')) as any;
const names = readdirSync(`${root}supabase/functions`, { withFileTypes: true })
  .filter((e) => e.isDirectory() && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(e.name))
  .map((e) => e.name)
  .sort();

/** The shortest description that can name the caller, the states and the effect. */
const MIN_LENGTH = 40;
/** "1-4 short sentences": a description longer than this belongs in docs/. */
const MAX_SENTENCES = 4;
const MAX_LENGTH = 800;

async function allMetas(): Promise<EndpointMeta[]> {
  const metas = await Promise.all(names.map((n) => endpointMeta(n)));
  return metas.map((m, i) => {
    if (!m) throw new Error(`supabase/functions/${names[i]}/handler.ts exports no endpoint`);
    return m;
  });
}

/** The sentences of a text: a stop, then white space and a capital or a `code` span. */
const sentences = (text: string) => text.trim().split(/(?<=[.!?])\s+(?=[A-Z`])/);

/** Every refusal code any operation answers (the document's ErrorCode). */
const allCodes = (metas: EndpointMeta[]) =>
  new Set(metas.flatMap((m) => [...answerRefusals(m).values()].flat().map((r) => r.code)));

describe('operation descriptions', () => {
  it('every endpoint definition has a description of at least 40 characters', async () => {
    const missing = (await allMetas())
      .filter((m) => (m.description ?? '').trim().length < MIN_LENGTH)
      .map((m) => `${m.name}: ${JSON.stringify(m.description ?? null)}`);
    expect(missing, `add a description to supabase/functions/<name>/handler.ts:\n${missing.join('\n')}`).toEqual([]);
  });

  it('says more than the summary, in at most four sentences', async () => {
    for (const meta of await allMetas()) {
      const description = (meta.description ?? '').trim();
      const summary = (meta.summary ?? '').trim().toLowerCase();
      expect(description.toLowerCase().startsWith(summary), `${meta.name} repeats its summary`).toBe(false);
      expect(sentences(description).length, `${meta.name}: ${description}`).toBeLessThanOrEqual(MAX_SENTENCES);
      expect(description.length, meta.name).toBeLessThanOrEqual(MAX_LENGTH);
    }
  });

  it('names no refusal code: the responses list them, per status', async () => {
    const metas = await allMetas();
    const codes = allCodes(metas);
    for (const meta of metas) {
      const named = [...codes].filter((code) => new RegExp(`\\b${code}\\b`).test(meta.description ?? ''));
      expect(named, meta.name).toEqual([]);
    }
  });

  it('is in the committed document, beside the summary of each operation', async () => {
    for (const meta of await allMetas()) {
      const path = committed.paths[`/${meta.name}`] as Record<string, Record<string, unknown>>;
      const op = path[meta.method.toLowerCase()];
      expect(op?.summary, meta.name).toBe(meta.summary);
      expect(op?.description, `${meta.name}: run \`npm run gen\``).toBe(meta.description);
    }
  });

  it('the checks fire: a missing, short or summary-repeating description is found', () => {
    const short = 'Reads it.';
    expect(short.length).toBeLessThan(MIN_LENGTH);
    expect(sentences('One. Two `a`. Three (x). Four? Five!')).toHaveLength(5);
    expect(sentences('Only the payer, while `funded` (e.g. a.b). Both are told.')).toHaveLength(2);
    const summary = 'Reads one escrow the caller is a party to';
    expect(`${summary}, in any state.`.toLowerCase().startsWith(summary.toLowerCase())).toBe(true);
  });
});
