// An event as its recipient reads it (docs/events.md, "Events"): the log holds facts only, so the
// `data` of each event is read when it is delivered, by the same read the REST operation of that
// name answers with, as that recipient: a message as message-feed has it, a notification as
// notification-list, an escrow as escrow-get, a wallet as wallet-get. Who may see it is asked
// again then: an event whose subject the recipient no longer sees (a deleted escrow's
// conversation, an escrow they are not a party to) is not sent.
import type { AuthUser } from '../auth/session.ts';
import { HttpError } from '../core/http.ts';
import { messageFeedItem } from '../conversations/conversations.ts';
import { notificationItem } from '../notifications/notifications.ts';
import { escrowGet } from '../escrow/escrow.ts';
import { walletGet } from '../money/wallet.ts';

/** One event of the log, as the readers take it. */
export interface LoggedEvent {
  id: string;
  kind: string;
  subject_id: string;
}

/** The event's `data` as JSON text for this recipient, or null when it is not to be sent. */
export async function renderEvent(user: AuthUser, event: LoggedEvent): Promise<string | null> {
  try {
    switch (event.kind) {
      case 'message':
        return (await messageFeedItem(user, event.subject_id))?.text ?? null;
      case 'notification': {
        const item = await notificationItem(user, event.subject_id);
        return item ? JSON.stringify(item) : null;
      }
      case 'escrow':
        return JSON.stringify(await escrowGet(user, event.subject_id));
      case 'wallet':
        return event.subject_id === user.id ? (await walletGet(user)).text : null;
      default:
        return null;
    }
  } catch (err) {
    // not (or no longer) theirs to read: the read's own 404
    if (err instanceof HttpError && err.status === 404) return null;
    throw err;
  }
}
