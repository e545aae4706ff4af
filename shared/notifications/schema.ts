// Request and response schemas of notification-list and notification-read.
import { z } from 'zod';
import { ACTION_LABELS, ENTITY_TYPES, NOTIFICATION_EVENT_TYPES } from './enums.ts';
import { queryBool, queryInt, queryTimestamp, uuidSchema as uuid } from '../core/validation.ts';
import { exactlyOne, withRules } from '../core/rules.ts';
import { count, timestamp, uuid as responseUuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const notificationListQuery = z.strictObject({
  escrow_id: uuid.optional(),
  limit: queryInt(50, 1, 100),
  before: queryTimestamp.optional(),
  unread_only: queryBool(false),
});

export const notificationReadBody = withRules(
  z.strictObject({ notification_id: uuid.optional(), escrow_id: uuid.optional() }),
  [
    exactlyOne(
      ['notification_id', 'escrow_id'],
      'give notification_id (one) or escrow_id (all of that escrow), exactly one',
    ),
  ],
);

// ---- responses (the `data` of the success envelope) ----------------------------------------

/**
 * The spec's Notification; action_label is null when the notification offers no action. A
 * notification about the account itself (KYC: entity_type account) has no escrow or conversation:
 * both are null (docs/decisions.md#kyc-tiers-and-limits).
 */
export const notificationResponse = z.strictObject({
  id: responseUuid,
  conversation_id: responseUuid.nullable(),
  escrow_id: responseUuid.nullable(),
  user_id: responseUuid,
  // One of NOTIFICATION_EVENT_TYPES (the spec: a string), the values the column's check constraint
  // allows (tests/integration/enums.test.ts compares the two).
  event_type: z.enum(NOTIFICATION_EVENT_TYPES),
  content: z.string(),
  entity_type: z.enum(ENTITY_TYPES),
  entity_id: responseUuid,
  action_label: z.enum(ACTION_LABELS).nullable(),
  is_read: z.boolean(),
  created_at: timestamp,
});
export type NotificationResponse = z.input<typeof notificationResponse>;

export const notificationListResponse = z.array(notificationResponse);

/** notification-read: how many notifications this call marked read (0 when all already were). */
export const notificationReadResponse = z.strictObject({ updated: count });
