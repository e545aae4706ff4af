// Whether the test suites saw every refusal an endpoint declares. A refusal in `refusals`
// (supabase/functions/<name>/handler.ts, rendered into the OpenAPI document) that no test ever
// received is a claim nobody checked: maybe the status cannot happen (the document says something
// false), maybe it is simply untested. `npm test` runs this after a full vitest run, from the
// statuses tests/support/responses.ts logged for every answer it checked (ANSWER_STATUS_LOG).
import type { EndpointMeta } from '../../shared/core/endpoint.ts';

export interface UnseenRefusal {
  name: string;
  status: number;
  description: string;
}

/** The (operation, status) pairs of a log: one `<name> <status>` per line. */
export function seenStatuses(log: string): Set<string> {
  return new Set(
    log.split('\n').map((l) => l.trim()).filter((l) => /^[a-z0-9-]+ \d{3}$/.test(l)),
  );
}

/** Every declared refusal of `metas` absent from `seen`, sorted by operation and status. */
export function unseenRefusals(metas: readonly EndpointMeta[], seen: Set<string>): UnseenRefusal[] {
  const out: UnseenRefusal[] = [];
  for (const meta of [...metas].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const [status, description] of Object.entries(meta.refusals ?? {})) {
      if (description !== undefined && !seen.has(`${meta.name} ${status}`)) {
        out.push({ name: meta.name, status: Number(status), description });
      }
    }
  }
  return out;
}
