// Whether the test suites saw every refusal an endpoint declares. A refusal in `refusals`
// (supabase/functions/<name>/handler.ts, listed by code in the OpenAPI document) that no test ever
// received is a claim nobody checked: maybe the code cannot be answered (the document says
// something false), maybe it is simply untested. `npm test` runs this after a full vitest run, from
// the statuses and codes tests/support/responses.ts logged for every answer it checked
// (ANSWER_STATUS_LOG).
import type { EndpointMeta } from '../../shared/core/endpoint.ts';

export interface UnseenRefusal {
  name: string;
  status: number;
  code: string;
  when: string;
}

/** The (operation, status, code) triples of a log: one `<name> <status> <code>` per line. */
export function seenRefusals(log: string): Set<string> {
  return new Set(
    log.split('\n').map((l) => l.trim()).filter((l) => /^[a-z0-9-]+ \d{3} [a-z][a-z0-9_]*$/.test(l)),
  );
}

/**
 * Every declared refusal of `metas` absent from `seen`, sorted by operation, status and code. A
 * refusal of an endpoint that performs others' actions (EndpointMeta.performsFor) is also covered
 * when one of those endpoints declares it and a test received it from there: the same code answers.
 */
export function unseenRefusals(metas: readonly EndpointMeta[], seen: Set<string>): UnseenRefusal[] {
  const out: UnseenRefusal[] = [];
  const byName = new Map(metas.map((m) => [m.name, m]));
  const coveredElsewhere = (meta: EndpointMeta, status: number, code: string) =>
    (meta.performsFor ?? []).some((name) =>
      (byName.get(name)?.refusals ?? []).some((r) => r.code === code && r.status === status) &&
      seen.has(`${name} ${status} ${code}`)
    );
  for (const meta of [...metas].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const r of [...(meta.refusals ?? [])].sort((a, b) => a.status - b.status || a.code.localeCompare(b.code))) {
      if (!seen.has(`${meta.name} ${r.status} ${r.code}`) && !coveredElsewhere(meta, r.status, r.code)) {
        out.push({ name: meta.name, status: r.status, code: r.code, when: r.when });
      }
    }
  }
  return out;
}
