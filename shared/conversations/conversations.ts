// Conversations (docs/conversations.md): one per escrow, read by its two parties.
// Reads run as the caller (row-level security keeps other people's conversations out of reach;
// to them a conversation does not exist: 404). A message is written by one SQL function
// (private.message_send) that checks the party and the 30-day read-only rule under the escrow's
// lock. The feed's created_at is unique and increasing per conversation (the migration
// 20261124000100_conversations.sql), so the before/after cursors lose and repeat nothing.
import { asService, asUser, readAsServiceThenUser, readAsUser, sqlLiteral, sqlText, type Tx } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import type { ActionLabel, EntityType, NotificationEventType } from '../notifications/enums.ts';
import type { EscrowStatus } from '../escrow/enums.ts';
import type { MessageType } from './enums.ts';
import { getConfig } from '../core/config.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { RATE_LIMITED } from '../core/refusals.ts';
import { CONVERSATION_NOT_FOUND } from './refusals.ts';
import { type NotificationMessage } from '../messages/catalog.ts';
import { renderNotification } from '../messages/texts.ts';
import type { ConversationResponse, FeedItemResponse } from './schema.ts';
import { filledJson, JsonText } from '../core/json-text.ts';

/** A feed item as the feed query reads it: a message, or one of the caller's notifications. */
interface FeedRow {
  id: string;
  source: 'message' | 'notification';
  created_at: string;
  conversation_id: string;
  escrow_id: string;
  content: string | null;
  message: NotificationMessage | null;
  sender_id: string | null;
  message_type: MessageType | null;
  event_type: NotificationEventType | null;
  entity_type: EntityType | null;
  entity_id: string | null;
  action_label: ActionLabel | null;
  is_read: boolean | null;
}

interface PartyNames {
  first_name: string;
  last_name: string;
  avatar_url: string | null;
}

/**
 * The columns of a feed item from its two sources; `$conv` is the conversation, and notifications
 * are only the caller's (auth.uid(): row-level security would also keep the others out).
 */
const MESSAGE_ITEMS =
  `select m.id, 'message' as source, m.created_at, m.conversation_id, c.escrow_id, m.content, null::jsonb as message, m.sender_id,
          m.message_type, null as event_type, null as entity_type, null::uuid as entity_id, null as action_label,
          null::boolean as is_read
     from public.messages m join public.conversations c on c.id = m.conversation_id`;
const NOTIFICATION_ITEMS =
  `select n.id, 'notification' as source, n.created_at, n.conversation_id, n.escrow_id, null as content, n.message, null::uuid,
          null, n.event_type, n.entity_type, n.entity_id, n.action_label, n.is_read
     from public.notifications n`;
const messageItems = (tx: Tx) => tx.unsafe(MESSAGE_ITEMS);
const notificationItems = (tx: Tx) => tx.unsafe(NOTIFICATION_ITEMS);

/** Names and avatars of the given users (the parties of the caller's conversations). */
async function partyNames(ids: Iterable<string>): Promise<Map<string, PartyNames>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  // Profiles are readable by their owner only; these ids come from rows the caller was allowed
  // to read (senders in their conversations, their revealed counterparties), and only the names
  // and avatar are read.
  const rows = await asService((tx) =>
    tx<(PartyNames & { id: string })[]>`
      select id, first_name, last_name, avatar_url from public.profiles where id = any(${wanted}::uuid[])`
  );
  return namesMap(rows);
}

const namesMap = (rows: readonly (PartyNames & { id: string })[]) =>
  new Map(rows.map((r) => [r.id, { first_name: r.first_name, last_name: r.last_name, avatar_url: r.avatar_url }]));

function feedItem(r: FeedRow, names: Map<string, PartyNames>): FeedItemResponse {
  if (r.source === 'message') {
    const sender = r.sender_id ? names.get(r.sender_id) : undefined;
    return {
      id: r.id,
      source: 'message',
      created_at: r.created_at,
      content: r.content ?? '',
      event_type: null,
      escrow_id: r.escrow_id,
      sender_id: r.sender_id,
      message_type: r.message_type,
      sender_first_name: sender?.first_name ?? null,
      sender_last_name: sender?.last_name ?? null,
      sender_avatar_url: sender?.avatar_url ?? null,
      entity_type: null,
      entity_id: null,
      action_label: null,
      is_read: null,
    };
  }
  return {
    id: r.id,
    source: 'notification',
    created_at: r.created_at,
    content: renderNotification(r.message as NotificationMessage),
    event_type: r.event_type,
    escrow_id: r.escrow_id,
    sender_id: null,
    message_type: null,
    sender_first_name: null,
    sender_last_name: null,
    sender_avatar_url: null,
    entity_type: r.entity_type,
    entity_id: r.entity_id,
    action_label: r.action_label,
    is_read: r.is_read,
  };
}

const senders = (rows: (FeedRow | null)[]) =>
  rows.flatMap((r) => (r?.source === 'message' && r.sender_id ? [r.sender_id] : []));

/** The conversation as the caller sees it (row-level security), unless its escrow was deleted. */
async function visibleConversation(tx: Tx, conversationId: string): Promise<void> {
  const [c] = await visibleConversationQuery(tx, conversationId);
  if (!c) throw CONVERSATION_NOT_FOUND.error({ conversation_id: conversationId });
}

const visibleConversationQuery = (tx: Tx, conversationId: string) =>
  sqlText(tx, visibleConversationText(`${sqlLiteral(conversationId)}::uuid`));

/** The query, as SQL text for a conversation id already written as a literal. */
const visibleConversationText = (conversation: string) =>
  `select 1 from public.conversations c join public.escrows e on e.id = c.escrow_id
    where c.id = ${conversation} and e.status <> 'deleted'`;

// ---- message-send ----------------------------------------------------------------------------

export async function messageSend(
  user: AuthUser,
  input: { conversation_id: string; content: string; message_type?: MessageType },
): Promise<FeedItemResponse> {
  const c = getConfig();
  const outcome = await asService(async (tx) => {
    // per sender, all conversations together, counted from their own messages in this
    // transaction (so a refused send stores nothing)
    const [limit] = await tx<{ wait: number }[]>`
      select private.message_rate_wait(${user.id}, ${c.MESSAGE_MAX_PER_MINUTE}, ${c.MESSAGE_MAX_PER_HOUR}) as wait`;
    const wait = Number(limit?.wait ?? 0);
    if (wait > 0) return { wait, row: null };
    const [row] = await tx<FeedRow[]>`
      select m.id, 'message' as source, m.created_at, m.conversation_id, c.escrow_id, m.content, m.sender_id, m.message_type
        from private.message_send(${input.conversation_id}, ${user.id}, ${input.message_type ?? 'text'},
                                  ${input.content}, now()) m
        join public.conversations c on c.id = m.conversation_id`;
    return { wait: 0, row: row as FeedRow };
  });
  if (!outcome.row) {
    throw RATE_LIMITED.error(
      { message: `Too many messages: you can send another in ${describeWait(outcome.wait)}` },
      { headers: retryAfterHeader(outcome.wait) },
    );
  }
  return feedItem(outcome.row, await partyNames([user.id]));
}

// ---- message-feed ----------------------------------------------------------------------------

/**
 * The page's bounds, as SQL text: `after` gives the oldest `limit` items newer than it; otherwise
 * the newest `limit` items older than `before` (or of all). Each source is cut to `limit` on its
 * own index.
 */
function feedWindow(q: { before?: string; after?: string }) {
  const newer = q.after !== undefined;
  return {
    dir: newer ? 'asc' : 'desc',
    cut: (col: string) =>
      newer
        ? ` and ${col} > ${sqlLiteral(q.after as string)}::timestamptz`
        : q.before !== undefined
        ? ` and ${col} < ${sqlLiteral(q.before as string)}::timestamptz`
        : '',
  };
}

/**
 * One round trip, one message (composed as text, every value a literal: shared/core/db.ts): the names
 * of the senders among the window's messages (profiles are their owners' only, so read as
 * service_role, and used only once the caller is known to see the conversation), then, as the
 * caller, whether they see it and the page itself.
 */
export async function messageFeed(
  { claims }: AuthUser,
  q: { conversation_id: string; limit: number; before?: string; after?: string },
): Promise<JsonText<FeedItemResponse[]>> {
  const [[page]] = await readAsUser(claims, (tx) => [
    sqlText<{ body: string | null; slots: string | null }[]>(
      tx,
      `select body, slots from reads.message_feed(${sqlLiteral(q.conversation_id)}::uuid, ${
        sqlLiteral(q.before ?? null)
      }::timestamptz, ${sqlLiteral(q.after ?? null)}::timestamptz, ${sqlLiteral(q.limit)})`,
    ),
  ]);
  if (!page?.body) throw CONVERSATION_NOT_FOUND.error({ conversation_id: q.conversation_id });
  return filledJson(page.body, page.slots, [
    (message) => JSON.stringify(renderNotification(message as NotificationMessage)),
  ]);
}

/**
 * One message as message-feed answers it to the caller (a live stream's `message` event): the
 * feed's page of one item just after the microsecond before the message, which is the message
 * itself (no two items of a feed share a created_at). Null when the caller does not see it (not a
 * party, or the escrow was deleted).
 */
export async function messageFeedItem(
  { claims }: AuthUser,
  messageId: string,
): Promise<JsonText<FeedItemResponse> | null> {
  const [[page]] = await readAsUser(claims, (tx) => [
    sqlText<{ body: string | null; slots: string | null }[]>(
      tx,
      `select f.body, f.slots from public.messages m
         cross join lateral reads.message_feed(m.conversation_id, null, m.created_at - interval '1 microsecond', 1) f
        where m.id = ${sqlLiteral(messageId)}::uuid`,
    ),
  ]);
  if (!page?.body || page.body === '[]') return null;
  const items = filledJson<FeedItemResponse[]>(page.body, page.slots, [
    (message) => JSON.stringify(renderNotification(message as NotificationMessage)),
  ]);
  return new JsonText(items.text.slice(1, -1));
}

/**
 * The names of the senders among the window's messages, as SQL text: profiles are their owners'
 * only, so they are read as service_role, and used only once the caller is known to see the
 * conversation.
 */
const senderNamesText = (conversation: string, w: ReturnType<typeof feedWindow>, limit: string) =>
  `select id, first_name, last_name, avatar_url from public.profiles where id in (
     select m.sender_id from public.messages m
      where m.conversation_id = ${conversation}${w.cut('m.created_at')}
      order by m.created_at ${w.dir} limit ${limit})`;

/**
 * The same page built here from the rows: what the test of the reads Postgres builds
 * (tests/integration/reads-built.test.ts) compares messageFeed's text with.
 */
export async function messageFeedAsObjects(
  { claims }: AuthUser,
  q: { conversation_id: string; limit: number; before?: string; after?: string },
): Promise<FeedItemResponse[]> {
  const w = feedWindow(q);
  const conversation = `${sqlLiteral(q.conversation_id)}::uuid`;
  const limit = sqlLiteral(q.limit);
  const [[senderNames], [[visible], found]] = await readAsServiceThenUser(
    claims,
    (tx) => [sqlText<(PartyNames & { id: string })[]>(tx, senderNamesText(conversation, w, limit))],
    (tx) => [
      sqlText(tx, visibleConversationText(conversation)),
      sqlText<FeedRow[]>(
        tx,
        `select * from (
           (${MESSAGE_ITEMS}
             where m.conversation_id = ${conversation}${w.cut('m.created_at')}
             order by m.created_at ${w.dir} limit ${limit})
           union all
           (${NOTIFICATION_ITEMS}
             where n.conversation_id = ${conversation} and n.user_id = (select auth.uid())${w.cut('n.created_at')}
             order by n.created_at ${w.dir} limit ${limit})
         ) items
         order by created_at ${w.dir}
         limit ${limit}`,
      ),
    ],
  );
  if (!visible) throw CONVERSATION_NOT_FOUND.error({ conversation_id: q.conversation_id });
  const rows = q.after !== undefined ? [...found] : [...found].reverse();
  const names = namesMap(senderNames);
  return rows.map((r) => feedItem(r, names));
}

// ---- conversation-list -----------------------------------------------------------------------

interface ConversationRow {
  conversation_id: string;
  escrow_id: string;
  escrow_title: string;
  escrow_status: EscrowStatus;
  counterparty_id: string | null;
  unread_count: number;
  last_activity_at: string;
}

export async function conversationList(
  { claims }: AuthUser,
  q: { limit: number; before?: string },
): Promise<ConversationResponse[]> {
  const { conversations, lastItems } = await asUser(claims, async (tx) => {
    // Every conversation of the caller with the time of its newest feed item (the caller's own
    // view: the messages and their notifications), newest activity first (reads.conversation_page)
    const page = await tx<ConversationRow[]>`
      select * from reads.conversation_page(${q.before ?? null}::timestamptz, ${q.limit})`;
    const ids = page.map((c) => c.conversation_id);
    // the newest item of each conversation on the page
    const lastItems = ids.length === 0 ? [] : await tx<FeedRow[]>`
      select last.* from unnest(${ids}::uuid[]) as page(id) cross join lateral (
        select * from (
          (${messageItems(tx)} where m.conversation_id = page.id order by m.created_at desc limit 1)
          union all
          (${notificationItems(tx)}
            where n.conversation_id = page.id and n.user_id = (select auth.uid()) order by n.created_at desc limit 1)
        ) items order by created_at desc limit 1
      ) last`;
    return { conversations: page, lastItems };
  });
  const last = new Map(lastItems.map((r) => [r.conversation_id, r]));
  const names = await partyNames([
    ...conversations.flatMap((c) => (c.counterparty_id ? [c.counterparty_id] : [])),
    ...senders(lastItems),
  ]);
  return conversations.map((c) => {
    const other = c.counterparty_id ? names.get(c.counterparty_id) : undefined;
    const item = last.get(c.conversation_id);
    return {
      conversation_id: c.conversation_id,
      escrow_id: c.escrow_id,
      escrow_title: c.escrow_title,
      escrow_status: c.escrow_status,
      counterparty_first_name: other?.first_name ?? null,
      counterparty_last_name: other?.last_name ?? null,
      last_item: item ? feedItem(item, names) : null,
      unread_count: c.unread_count,
      last_activity_at: c.last_activity_at,
    };
  });
}

// ---- conversation-read -----------------------------------------------------------------------

/** Marks the caller's notifications of the conversation read; how many this call changed. */
export function conversationRead({ claims }: AuthUser, conversationId: string): Promise<{ updated: number }> {
  return asUser(claims, async (tx) => {
    await visibleConversation(tx, conversationId);
    const rows = await tx`
      update public.notifications set is_read = true
       where conversation_id = ${conversationId} and user_id = (select auth.uid()) and not is_read
      returning id`;
    return { updated: rows.length };
  });
}
