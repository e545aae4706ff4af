// The notifications the service writes, one entry per message kind (shared/messages/texts.ts writes
// their sentences): the event types it is written with, who receives it, the operations and SQL
// functions that write it, what its entity_id points at and the action the client should offer.
// This is the one source of that list: docs/notifications.md is rendered from it (`npm run
// docs:notifications`), shared/messages/texts.ts takes each kind's event types from it, and
// tests/unit/notification-events.test.ts checks it against every private.notify call in
// supabase/schema.sql (kind, entity type, action label and enclosing function).
import type { ActionLabel, EntityType, NotificationEventType } from '../core/enums.ts';
import type { NotificationKind } from './texts.ts';

export interface NotificationSpec {
  /** The event types this kind is written with (more than one when the caller names it). */
  readonly events: readonly NotificationEventType[];
  /** Who receives it. */
  readonly to: string;
  /**
   * The API operations (endpoints, the job, the payments webhook) whose transaction writes it; per
   * event type when the kind is written with several.
   */
  readonly operations: readonly string[] | { readonly [E in NotificationEventType]?: readonly string[] };
  /** The SQL functions that write it (checked against supabase/schema.sql). */
  readonly sql: readonly string[];
  /** What entity_id points at. */
  readonly entity_type: EntityType;
  /** The action offered (null: none); more than one when it depends on the state. */
  readonly action_labels: readonly (ActionLabel | null)[];
}

/** What a client calls when the user taps an action label (the notification's entity in hand). */
export const ACTION_OPERATIONS: Record<ActionLabel, { operation: string; how: string }> = {
  'View escrow': { operation: 'escrow-get', how: "escrow_id = the notification's escrow_id" },
  'Review invitation': {
    operation: 'escrow-get',
    how: 'shows the terms; then escrow-accept or escrow-decline with the escrow_id',
  },
  'Fund escrow': { operation: 'escrow-fund', how: "escrow_id = the notification's escrow_id" },
  'Inspect delivery': {
    operation: 'escrow-get',
    how: 'shows the inspection deadline (inspection_ends_at); then escrow-release when satisfied',
  },
  'Release funds': { operation: 'escrow-release', how: "escrow_id = the notification's escrow_id" },
  'Leave a review': { operation: 'review-submit', how: "escrow_id = the notification's escrow_id, a rating 1-5" },
  'View transaction': {
    operation: 'transaction-list',
    how: "escrow_id = the notification's escrow_id; the transaction is the entity_id",
  },
  'Review milestone': {
    operation: 'milestone-list',
    how: "escrow_id = the notification's escrow_id; then milestone-approve with the entity_id",
  },
  'View milestone': { operation: 'milestone-list', how: "escrow_id = the notification's escrow_id" },
  'Release milestone': { operation: 'milestone-release', how: 'milestone_id = the entity_id' },
  'View dispute': { operation: 'dispute-get', how: "escrow_id = the notification's escrow_id" },
  'Respond to proposal': {
    operation: 'dispute-get',
    how: 'shows the open proposals; then dispute-respond with the escrow_id, the proposal_id and accept',
  },
  'Verify identity': {
    operation: 'kyc-status',
    how: 'shows the tier, its limits and what the next tier needs; then kyc-start or identity-verify',
  },
};

export const NOTIFICATIONS = {
  escrow_created: {
    events: ['escrow_created'],
    to: 'the initiator',
    operations: ['escrow-create'],
    sql: ['private.escrow_create'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  invite_received: {
    events: ['invite_received'],
    to: 'the counterparty (once they have an account), when they are asked to pay',
    operations: ['escrow-create'],
    sql: ['private.escrow_create'],
    entity_type: 'escrow',
    action_labels: ['Review invitation'],
  },
  invite_received_funded: {
    events: ['invite_received'],
    to: 'the counterparty, when the initiator has paid',
    operations: ['escrow-fund', 'webhook-payments'],
    sql: ['private.escrow_mark_funded'],
    entity_type: 'escrow',
    action_labels: ['Review invitation'],
  },
  funded_payer: {
    events: ['funded'],
    to: 'the payer',
    operations: ['escrow-fund', 'webhook-payments'],
    sql: ['private.escrow_mark_funded'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  funded_payee: {
    events: ['funded'],
    to: 'the payee, when the escrow was already accepted',
    operations: ['escrow-fund', 'webhook-payments'],
    sql: ['private.escrow_mark_funded'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  funding_shortfall: {
    events: ['funding_shortfall'],
    to: 'the payer, when a bank transfer covered only part of the charge',
    operations: ['webhook-payments'],
    sql: ['private.bank_transfer_received'],
    entity_type: 'escrow',
    action_labels: ['Fund escrow'],
  },
  accepted: {
    events: ['active'],
    to: 'the initiator, when the counterparty accepted an escrow not yet funded',
    operations: ['escrow-accept'],
    sql: ['private.escrow_accept'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  accepted_funded: {
    events: ['active'],
    to: 'the initiator, when the counterparty accepted an escrow the initiator funded',
    operations: ['escrow-accept'],
    sql: ['private.escrow_accept'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  payment_requested: {
    events: ['payment_requested'],
    to: 'the counterparty who accepted and pays; the entity is the pending funding transaction',
    operations: ['escrow-accept'],
    sql: ['private.escrow_accept'],
    entity_type: 'transaction',
    action_labels: ['Fund escrow'],
  },
  closed_unfunded: {
    events: ['declined', 'cancelled'],
    to: 'both parties, when an escrow without money is declined or cancelled',
    operations: { declined: ['escrow-decline'], cancelled: ['escrow-cancel'] },
    sql: ['private.escrow_close_unfunded'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  refunded_unaccepted: {
    events: ['declined', 'cancelled'],
    to: 'both parties, when an escrow the initiator funded is declined or cancelled before acceptance',
    operations: { declined: ['escrow-decline'], cancelled: ['escrow-cancel'] },
    sql: ['private.escrow_refund_unaccepted'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  refunded: {
    events: ['refunded'],
    to: 'both parties',
    operations: ['escrow-refund'],
    sql: ['private.escrow_refund'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  delivered_inspection: {
    events: ['delivered'],
    to: 'the payer, when the delivery opens an inspection period',
    operations: ['escrow-deliver'],
    sql: ['private.escrow_deliver'],
    entity_type: 'escrow',
    action_labels: ['Inspect delivery'],
  },
  delivered: {
    events: ['delivered'],
    to: 'the payer, when the category has no inspection period',
    operations: ['escrow-deliver'],
    sql: ['private.escrow_deliver'],
    entity_type: 'escrow',
    action_labels: ['Release funds'],
  },
  released_payee: {
    events: ['released'],
    to: 'the payee',
    operations: ['escrow-release', 'jobs-run'],
    sql: ['private.escrow_release'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  released_payer: {
    events: ['released'],
    to: 'the payer',
    operations: ['escrow-release', 'jobs-run'],
    sql: ['private.escrow_release'],
    entity_type: 'escrow',
    action_labels: ['Leave a review'],
  },
  milestones_released_payee: {
    events: ['released'],
    to: 'the payee, when the last milestone released the whole amount',
    operations: ['milestone-release'],
    sql: ['private.milestone_release'],
    entity_type: 'escrow',
    action_labels: ['View escrow'],
  },
  milestones_released_payer: {
    events: ['released'],
    to: 'the payer, when the last milestone released the whole amount',
    operations: ['milestone-release'],
    sql: ['private.milestone_release'],
    entity_type: 'escrow',
    action_labels: ['Leave a review'],
  },
  payout_succeeded: {
    events: ['payout_succeeded'],
    to: 'the payee whose release was paid out to their bank',
    operations: ['webhook-payments', 'jobs-run'],
    sql: ['private.escrow_payout_settled'],
    entity_type: 'transaction',
    action_labels: ['View transaction'],
  },
  payout_failed: {
    events: ['payout_failed'],
    to: 'the payee whose payout failed (the money is back in their wallet)',
    operations: ['webhook-payments', 'jobs-run'],
    sql: ['private.escrow_payout_settled'],
    entity_type: 'transaction',
    action_labels: ['View transaction'],
  },
  milestone_proposed: {
    events: ['milestone_proposed'],
    to: 'the other party',
    operations: ['milestone-create'],
    sql: ['private.milestone_create'],
    entity_type: 'milestone',
    action_labels: ['Review milestone'],
  },
  milestone_updated: {
    events: ['milestone_updated'],
    to: 'the other party',
    operations: ['milestone-update'],
    sql: ['private.milestone_update'],
    entity_type: 'milestone',
    action_labels: ['Review milestone'],
  },
  milestone_accepted: {
    events: ['milestone_accepted'],
    to: 'both parties, when the second approval makes it accepted',
    operations: ['milestone-approve'],
    sql: ['private.milestone_approve'],
    entity_type: 'milestone',
    action_labels: ['View milestone'],
  },
  milestone_completed: {
    events: ['milestone_completed'],
    to: 'the payer',
    operations: ['milestone-complete'],
    sql: ['private.milestone_complete'],
    entity_type: 'milestone',
    action_labels: ['Release milestone'],
  },
  milestone_released: {
    events: ['milestone_released'],
    to: 'the payee',
    operations: ['milestone-release'],
    sql: ['private.milestone_release'],
    entity_type: 'milestone',
    action_labels: ['View milestone'],
  },
  review_received: {
    events: ['review_received'],
    to: 'the party who was reviewed',
    operations: ['review-submit'],
    sql: ['private.review_submit'],
    entity_type: 'review',
    // "Leave a review" while they have not reviewed the other party yet
    action_labels: ['Leave a review', null],
  },
  dispute_raised: {
    events: ['dispute_raised'],
    to: 'both parties',
    operations: ['dispute-raise'],
    sql: ['private.dispute_raise'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_proposal: {
    events: ['dispute_proposal'],
    to: 'the other party than the proposer',
    operations: ['dispute-propose'],
    sql: ['private.dispute_propose'],
    entity_type: 'dispute',
    action_labels: ['Respond to proposal'],
  },
  dispute_proposal_rejected: {
    events: ['dispute_proposal_rejected'],
    to: 'the proposer',
    operations: ['dispute-respond'],
    sql: ['private.dispute_respond'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_withdrawn: {
    events: ['dispute_withdrawn'],
    to: 'both parties',
    operations: ['dispute-withdraw'],
    sql: ['private.dispute_withdraw'],
    entity_type: 'dispute',
    action_labels: ['View escrow'],
  },
  dispute_deadline_soon: {
    events: ['dispute_deadline_soon'],
    to: 'both parties, 24 hours before the negotiation deadline',
    operations: ['jobs-run'],
    sql: ['private.run_dispute_jobs'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_escalated: {
    events: ['dispute_escalated'],
    to: 'both parties, at the deadline without a settlement',
    operations: ['jobs-run'],
    sql: ['private.run_dispute_jobs'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  dispute_resolved: {
    events: ['dispute_resolved'],
    to: 'both parties, each with what they received (also by SMS)',
    operations: ['dispute-respond', 'admin-dispute-resolve', 'jobs-run'],
    sql: ['private.dispute_settle'],
    entity_type: 'dispute',
    action_labels: ['View dispute'],
  },
  kyc_tier_raised: {
    events: ['kyc_tier_changed'],
    to: 'the user, when a passed check completes a higher tier (also by SMS); no escrow',
    operations: ['webhook-kyc', 'webhook-identity'],
    sql: ['private.kyc_record'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  kyc_tier_lowered: {
    events: ['kyc_tier_changed'],
    to: 'the user, when a FINAL rejection withdraws a passed check (also by SMS); no escrow',
    operations: ['webhook-kyc', 'webhook-identity'],
    sql: ['private.kyc_record'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  verification_failed: {
    events: ['verification_failed'],
    to: 'the user, when a check fails (and whether it may be tried again); no escrow',
    operations: ['webhook-kyc', 'webhook-identity'],
    sql: ['private.kyc_record'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
  verification_needed: {
    events: ['verification_needed'],
    to:
      "the user, when a bank transfer took the wallet above the tier's balance limit (also by SMS; once a day); no escrow",
    operations: ['webhook-payments'],
    sql: ['private.kyc_balance_notice'],
    entity_type: 'account',
    action_labels: ['Verify identity'],
  },
} as const satisfies { [K in NotificationKind]: NotificationSpec };

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
