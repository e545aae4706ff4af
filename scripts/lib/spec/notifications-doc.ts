// docs/notifications.md, rendered from the catalog of messages (`npm run docs:notifications`;
// tests/unit/notification-events.test.ts fails when the committed file is stale).
import type { ActionLabel, EntityType, NotificationEventType } from '../../../shared/notifications/enums.ts';
import {
  ACTION_OPERATIONS,
  type NotificationKind,
  NOTIFICATIONS,
  type NotificationSpec,
} from '../../../shared/messages/catalog.ts';

const isList = (ops: NotificationSpec['operations']): ops is readonly string[] => Array.isArray(ops);

/** One row per event type: what the docs list (the kinds written with it, merged). */
export function notificationEvents(): {
  event: NotificationEventType;
  kinds: NotificationKind[];
  to: string[];
  operations: string[];
  entity_types: EntityType[];
  action_labels: (ActionLabel | null)[];
}[] {
  const rows = new Map<NotificationEventType, ReturnType<typeof notificationEvents>[number]>();
  for (const [kind, spec] of Object.entries(NOTIFICATIONS) as [NotificationKind, NotificationSpec][]) {
    for (const event of spec.events) {
      const row = rows.get(event) ??
        { event, kinds: [], to: [], operations: [], entity_types: [], action_labels: [] };
      const add = <T>(list: T[], values: readonly T[]) => {
        for (const v of values) if (!list.includes(v)) list.push(v);
      };
      add(row.kinds, [kind]);
      add(row.to, [spec.to]);
      const ops = spec.operations;
      add(row.operations, isList(ops) ? ops : ops[event] ?? []);
      add(row.entity_types, [spec.entity_type]);
      add(row.action_labels, spec.action_labels);
      rows.set(event, row);
    }
  }
  return [...rows.values()];
}

/** docs/notifications.md. */
export function renderNotificationsDoc(): string {
  const code = (s: string) => `\`${s}\``;
  const label = (l: ActionLabel | null) => (l === null ? 'none' : `"${l}"`);
  const lines = [
    '# Notification events',
    '',
    '<!-- Generated from shared/messages/catalog.ts by `npm run docs:notifications`; do not edit. -->',
    '',
    'Every notification (in `notification-list` and, with `source: "notification"`, in the',
    '`message-feed` of its escrow) carries an `event_type`, an `entity_type` with the `entity_id` it',
    'points at, and an `action_label` when the client should offer an action (`null` otherwise). Its',
    "`content` is a sentence written from the notification's kind (shared/messages/texts.ts).",
    '',
    '## Event types',
    '',
    '| event_type | operations that emit it | who receives it | entity_type | action_label |',
    '|---|---|---|---|---|',
  ];
  for (const r of notificationEvents()) {
    lines.push(
      `| ${code(r.event)} | ${r.operations.map(code).join(', ')} | ${r.to.join('; ')} | ${
        r.entity_types.map(code).join(', ')
      } | ${r.action_labels.map(label).join(', ')} |`,
    );
  }
  lines.push(
    '',
    '## Action labels',
    '',
    'What the client calls when the user taps the action:',
    '',
    '| action_label | operation | how |',
    '|---|---|---|',
  );
  for (const [l, a] of Object.entries(ACTION_OPERATIONS)) lines.push(`| "${l}" | ${code(a.operation)} | ${a.how} |`);
  lines.push(
    '',
    '## Kinds',
    '',
    'Each event type is written with one or more kinds (what the sentence says). The SQL function',
    'that writes each is checked against `supabase/schema.sql` by `tests/unit/notification-events.test.ts`.',
    '',
    '| kind | event_type | SQL function | entity_type | action_label |',
    '|---|---|---|---|---|',
  );
  for (const [kind, s] of Object.entries(NOTIFICATIONS) as [NotificationKind, NotificationSpec][]) {
    lines.push(
      `| ${code(kind)} | ${s.events.map(code).join(', ')} | ${s.sql.map(code).join(', ')} | ${code(s.entity_type)} | ${
        s.action_labels.map(label).join(', ')
      } |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
