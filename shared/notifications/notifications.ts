// Notifications: written by the transitions (SQL), read and marked read here as the caller. A
// row records its message (kind and params); its content is written from it when it is read.
import type { AuthUser } from '../auth/session.ts';
import { asUser } from '../core/db.ts';
import { type NotificationResponse, notificationResponse } from './schema.ts';
import { answerOf, columnsOf, type RowOf } from '../core/rows.ts';
import { NOTIFICATION_ESCROW_NOT_FOUND, NOTIFICATION_NOT_FOUND } from './refusals.ts';
import { type NotificationMessage } from '../messages/catalog.ts';
import { renderNotification } from '../messages/texts.ts';

/** A notification as stored: the answer's fields, with the message its content is written from. */
type NotificationRow = RowOf<NotificationResponse, 'content', { message: NotificationMessage }>;

const NOTIFICATION_COLUMNS = columnsOf(notificationResponse, { computed: ['content'], stored: ['message'] });

const view = (n: NotificationRow): NotificationResponse =>
  answerOf(notificationResponse, { ...n, content: renderNotification(n.message) });

export function notificationList(
  { claims }: AuthUser,
  q: { escrow_id?: string; limit: number; before?: string; unread_only: boolean },
) {
  return asUser(claims, async (tx) => {
    const rows = await tx<NotificationRow[]>`
      select ${tx(NOTIFICATION_COLUMNS)} from public.notifications
       where user_id = (select auth.uid())
         ${q.escrow_id ? tx`and escrow_id = ${q.escrow_id}` : tx``}
         ${q.unread_only ? tx`and not is_read` : tx``}
         ${q.before ? tx`and created_at < ${q.before}::timestamptz` : tx``}
       order by created_at desc
       limit ${q.limit}`;
    return rows.map(view);
  });
}

/** One of the caller's notifications as notification-list answers it (a live stream's `notification` event); null when it is not theirs. */
export function notificationItem({ claims }: AuthUser, id: string): Promise<NotificationResponse | null> {
  return asUser(claims, async (tx) => {
    const [row] = await tx<NotificationRow[]>`
      select ${tx(NOTIFICATION_COLUMNS)} from public.notifications where id = ${id} and user_id = (select auth.uid())`;
    return row ? view(row) : null;
  });
}

/** Marks one notification, or every notification of one escrow, read (as the caller, under RLS). */
export function notificationRead({ claims }: AuthUser, input: { notification_id?: string; escrow_id?: string }) {
  return asUser(claims, async (tx) => {
    if (input.notification_id) {
      const rows = await tx`
        update public.notifications set is_read = true
         where id = ${input.notification_id} and user_id = (select auth.uid()) returning id`;
      if (rows.length === 0) throw NOTIFICATION_NOT_FOUND.error({ notification_id: input.notification_id });
      return { updated: 1 };
    }
    const [escrow] = await tx`select 1 from public.escrows where id = ${input.escrow_id as string}`;
    if (!escrow) throw NOTIFICATION_ESCROW_NOT_FOUND.error({ escrow_id: input.escrow_id as string });
    const rows = await tx`
      update public.notifications set is_read = true
       where escrow_id = ${input.escrow_id as string} and user_id = (select auth.uid()) and not is_read returning id`;
    return { updated: rows.length };
  });
}
