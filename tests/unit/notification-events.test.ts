// The notification catalog (shared/messages/catalog.ts) against the SQL that writes
// notifications and the docs rendered from it. Every private.notify call in supabase/schema.sql
// (the current definition of every function) is read: the kinds its message can have, its entity
// type, the action labels it can offer and the function it sits in must be what the catalog says
// for each of those kinds, and every kind of the catalog must be written somewhere.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACTION_LABELS, NOTIFICATION_EVENT_TYPES } from '../../shared/notifications/enums.ts';
import { ACTION_OPERATIONS, NOTIFICATIONS } from '../../shared/messages/catalog.ts';
import { renderNotificationsDoc } from '../../scripts/lib/spec/notifications-doc.ts';
import { NOTIFICATION_KINDS } from '../../shared/messages/catalog.ts';

const schema = readFileSync(new URL('../../supabase/schema.sql', import.meta.url), 'utf8');

/** The arguments of a call starting at `open` (the index of its '('), split at top-level commas. */
function callArguments(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === "'") quoted = false;
      continue;
    }
    if (ch === "'") quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth === 0) {
        args.push(text.slice(start, i).trim());
        return args;
      }
    } else if (ch === ',' && depth === 1) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error(`unbalanced call at ${open}`);
}

const literals = (expr: string) =>
  [...expr.matchAll(/'((?:[^']|'')*)'/g)].map((m) => (m[1] as string).replace(/''/g, "'"));

interface NotifyCall {
  fn: string;
  kinds: string[];
  events: string[] | null; // null: a parameter the callers pass
  entity: string[];
  actions: (string | null)[];
}

/**
 * Functions that write notifications for their callers: where their arguments sit (the entity
 * type is fixed by the wrapper). Their own private.notify call forwards parameters and is skipped.
 */
const WRAPPERS: Record<string, { event: number; message: number; entity: string; action: number }> = {
  'private.dispute_notify': { event: 2, message: 3, entity: "'dispute'", action: 4 },
  'private.notify_account': { event: 1, message: 2, entity: "'account'", action: 3 },
};

function notifyCalls(): NotifyCall[] {
  const calls: NotifyCall[] = [];
  const fnStarts = [...schema.matchAll(/^CREATE OR REPLACE FUNCTION ([a-z_]+\.[a-z_]+)\(/gm)].map((m) => ({
    at: m.index as number,
    name: m[1] as string,
  }));
  const callee = /private\.(notify|dispute_notify|notify_account)\(/g;
  for (const m of schema.matchAll(callee)) {
    const at = m.index as number;
    const lineStart = schema.lastIndexOf('\n', at) + 1;
    if (/^(CREATE OR REPLACE FUNCTION|comment on|revoke|grant|--)/.test(schema.slice(lineStart, at + 1))) continue;
    const fn = fnStarts.filter((f) => f.at < at).pop()?.name ?? '?';
    const name = `private.${m[1]}`;
    if (name === 'private.notify' && fn in WRAPPERS) continue;
    const args = callArguments(schema, at + name.length);
    const w = WRAPPERS[name];
    const [event, message, entity, action] = w
      ? [args[w.event], args[w.message], w.entity, args[w.action]]
      : [args[2], args[3], args[4], args[6]];
    const kind = /'kind',\s*('[a-z_]+'|case\b[\s\S]*?\bend)/.exec(message as string);
    expect(kind, `${fn}: the message of a notify call has no 'kind'`).not.toBeNull();
    calls.push({
      fn,
      kinds: literals(kind![1] as string),
      events: /^p_/.test(event as string) ? null : literals(event as string),
      entity: literals(entity as string),
      actions: [...literals(action as string), ...(/\bnull\b/i.test(action as string) ? [null] : [])],
    });
  }
  return calls;
}

describe('shared/messages/catalog.ts', () => {
  const calls = notifyCalls();

  it('finds the notify calls of supabase/schema.sql', () => {
    expect(calls.length).toBeGreaterThanOrEqual(20);
  });

  it('has one entry per notification kind of shared/messages/texts.ts', () => {
    expect(Object.keys(NOTIFICATIONS).sort()).toEqual([...NOTIFICATION_KINDS].sort());
  });

  it.each(calls.map((c) => ({ ...c, label: `${c.fn} (${c.kinds.join(', ')})` })))(
    'the notify call in $label writes what the catalog says',
    (call) => {
      for (const kind of call.kinds) {
        const spec = (NOTIFICATIONS as Record<string, (typeof NOTIFICATIONS)[keyof typeof NOTIFICATIONS]>)[kind];
        expect(spec, `kind ${kind} is not in the catalog`).toBeDefined();
        expect(spec!.sql, `${kind}: sql`).toContain(call.fn);
        expect(call.entity, `${kind}: entity_type`).toEqual([spec!.entity_type]);
        expect([...call.actions].sort(), `${kind}: action labels`).toEqual([...spec!.action_labels].sort());
      }
      // a literal event (or a case over them, alongside a case over the kinds) is what those kinds are written with
      if (call.events) {
        const catalog = new Set(
          call.kinds.flatMap((k) => (NOTIFICATIONS as Record<string, { events: readonly string[] }>)[k]!.events),
        );
        expect([...new Set(call.events)].sort(), 'event types').toEqual([...catalog].sort());
      }
    },
  );

  it('every kind of the catalog is written by the SQL functions it names, and only there', () => {
    for (const [kind, spec] of Object.entries(NOTIFICATIONS)) {
      const writers = [...new Set(calls.filter((c) => c.kinds.includes(kind)).map((c) => c.fn))].sort();
      expect(writers, kind).toEqual([...spec.sql].sort());
    }
  });

  it('covers every event type and offers only known action labels, each with its operation', () => {
    const events = new Set(Object.values(NOTIFICATIONS).flatMap((s) => s.events));
    expect([...events].sort()).toEqual([...NOTIFICATION_EVENT_TYPES].sort());
    expect(Object.keys(ACTION_OPERATIONS).sort()).toEqual([...ACTION_LABELS].sort());
    // "Leave a review" leads to review-submit
    expect(ACTION_OPERATIONS['Leave a review'].operation).toBe('review-submit');
  });

  it('operations are endpoints that exist', () => {
    const functions = readFileSync(new URL('../../supabase/config.toml', import.meta.url), 'utf8');
    const ops = new Set([
      ...Object.values(NOTIFICATIONS).flatMap((s) =>
        Array.isArray(s.operations) ? s.operations : Object.values(s.operations).flat()
      ),
      ...Object.values(ACTION_OPERATIONS).map((a) => a.operation),
    ]);
    for (const op of ops) expect(functions, op).toContain(`[functions.${op}]`);
  });

  it('docs/notifications.md is the catalog, rendered (run `npm run docs:notifications` after changing it)', () => {
    const committed = readFileSync(new URL('../../docs/notifications.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderNotificationsDoc());
  });
});
