// The webhook event types, written once (docs/webhooks.md#event-types). Only escrow events are sent
// to webhooks: an escrow created, and an escrow arriving in one of the statuses below. The database
// names an event's type with the same list (private.webhook_event_type, in
// supabase/migrations/20261127160000_webhook_queue.sql); tests/integration/webhook-queue.clock.test.ts
// compares the two for every pair of statuses.
import type { EscrowStatus } from '../escrow/enums.ts';

/** An escrow created (any first status). */
export const ESCROW_CREATED = 'escrow.created';

/** The seller marked it delivered (its inspection starts, where its category has one), whatever its status. */
export const ESCROW_DELIVERED = 'escrow.delivered';

/** The statuses whose arrival is an event of its own, and its type; any other change sends nothing. */
export const ESCROW_STATUS_WEBHOOK_TYPES = {
  funded: 'escrow.funded',
  released: 'escrow.released',
  refunded: 'escrow.refunded',
  cancelled: 'escrow.cancelled',
  disputed: 'escrow.disputed',
} as const satisfies Partial<Record<EscrowStatus, `escrow.${string}`>>;

/** Every type a webhook can carry. */
export const WEBHOOK_EVENT_TYPES = [
  ESCROW_CREATED,
  ESCROW_DELIVERED,
  ...Object.values(ESCROW_STATUS_WEBHOOK_TYPES),
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The type of an escrow event from its facts: `previous` null is the escrow's creation; `delivered`
 * its delivery; otherwise a change into a status of the table above, or null (nothing is sent).
 */
export function escrowWebhookType(
  status: string,
  previous: string | null,
  delivered = false,
): WebhookEventType | null {
  if (previous === null) return ESCROW_CREATED;
  if (delivered) return ESCROW_DELIVERED;
  if (status === previous) return null;
  return (ESCROW_STATUS_WEBHOOK_TYPES as Record<string, WebhookEventType>)[status] ?? null;
}
