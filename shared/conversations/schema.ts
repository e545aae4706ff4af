// Conversations and the message feed (docs/conversations.md): requests, then the
// spec's Message feed item and the conversation-list item.
import { z } from 'zod';
import { ACTION_LABELS, ENTITY_TYPES, NOTIFICATION_EVENT_TYPES } from '../notifications/enums.ts';
import { ESCROW_STATUSES } from '../escrow/enums.ts';
import { MESSAGE_TYPES } from './enums.ts';
import { queryInt, queryTimestamp, text, uuidSchema as uuid } from '../core/validation.ts';
import { notTogether, withRules } from '../core/rules.ts';
import { count, timestamp, uuid as responseUuid } from '../core/schema.ts';

/** The longest message, in characters (Unicode code points, as Postgres' char_length counts them). */
export const MESSAGE_MAX_CHARS = 4000;

// ---- requests --------------------------------------------------------------------------------

export const messageSendBody = z.strictObject({
  conversation_id: uuid,
  // code points, not UTF-16 units: an emoji is one character to the person typing it
  content: text(1, MESSAGE_MAX_CHARS),
  message_type: z.enum(MESSAGE_TYPES).optional(),
});

export const messageFeedQuery = withRules(
  z.strictObject({
    conversation_id: uuid,
    limit: queryInt(100, 1, 200),
    before: queryTimestamp.optional(),
    after: queryTimestamp.optional(),
  }),
  [notTogether(['before', 'after'], 'give before (older items) or after (newer items), not both')],
);

export const conversationListQuery = z.strictObject({
  limit: queryInt(20, 1, 50),
  before: queryTimestamp.optional(),
});

export const conversationIdBody = z.strictObject({ conversation_id: uuid });

// ---- responses -------------------------------------------------------------------------------

/**
 * The spec's Message feed item: a message (sender fields set, notification fields null, is_read
 * null) or one of the caller's notifications (event_type, entity, action and is_read set, sender
 * fields null).
 */
export const feedItemResponse = z.strictObject({
  id: responseUuid,
  source: z.enum(['notification', 'message']),
  created_at: timestamp,
  content: z.string(),
  event_type: z.enum(NOTIFICATION_EVENT_TYPES).nullable(),
  escrow_id: responseUuid,
  sender_id: responseUuid.nullable(),
  message_type: z.enum(MESSAGE_TYPES).nullable(),
  sender_first_name: z.string().nullable(),
  sender_last_name: z.string().nullable(),
  sender_avatar_url: z.string().nullable(),
  entity_type: z.enum(ENTITY_TYPES).nullable(),
  entity_id: responseUuid.nullable(),
  action_label: z.enum(ACTION_LABELS).nullable(),
  is_read: z.boolean().nullable(),
});
export type FeedItemResponse = z.input<typeof feedItemResponse>;

export const messageFeedResponse = z.array(feedItemResponse);

/**
 * One conversation of conversation-list. The counterparty's names are null until they are known
 * to the caller: an initiator learns who the invited phone belongs to when they accept, decline or
 * write in the conversation.
 */
export const conversationResponse = z.strictObject({
  conversation_id: responseUuid,
  escrow_id: responseUuid,
  escrow_title: z.string(),
  escrow_status: z.enum(ESCROW_STATUSES),
  counterparty_first_name: z.string().nullable(),
  counterparty_last_name: z.string().nullable(),
  last_item: feedItemResponse.nullable(),
  unread_count: count,
  last_activity_at: timestamp,
});
export type ConversationResponse = z.input<typeof conversationResponse>;

export const conversationListResponse = z.array(conversationResponse);

/** conversation-read: how many of the caller's notifications this call marked read. */
export const conversationReadResponse = z.strictObject({ updated: count });
