// The account export (GET /account-export): everything the service holds about the caller, as
// one document built by one SQL statement (private.account_export). The handler only writes what
// TypeScript words: a transaction's description and its metadata's kobo figures in naira, a
// notification's content, as transaction-list and notification-list do. Not an Idempotency-Key
// operation (a GET): the document is never stored.
import type { AuthUser } from '../auth/session.ts';
import { asService } from '../core/db.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { RATE_LIMITED } from '../core/refusals.ts';
import type { NotificationMessage, TransactionMessage } from '../messages/catalog.ts';
import { renderNotification, renderTransaction } from '../messages/texts.ts';
import { metadataInNaira } from '../money/transactions.ts';
import type { AccountExportResponse } from './schema.ts';

/** One export an hour per user: the document reads every store of the account. */
export const ACCOUNT_EXPORT_RULE = { limit: 1, window_seconds: 3600 } as const;

/** The rate-limit key of a user's exports (private.rate_limit_events.key). */
export const accountExportKey = (userId: string) => `account-export:${userId}`;

type Stored = Omit<AccountExportResponse, 'transactions' | 'notifications'> & {
  transactions: (Omit<AccountExportResponse['transactions'][number], 'description'> & {
    message: TransactionMessage | null;
  })[];
  notifications: (Omit<AccountExportResponse['notifications'][number], 'content'> & {
    message: NotificationMessage;
  })[];
};

export async function accountExport(user: AuthUser): Promise<AccountExportResponse> {
  const outcome = await asService(async (tx) => {
    const rules = [{ key: accountExportKey(user.id), ...ACCOUNT_EXPORT_RULE }];
    const [limit] = await tx<{ wait: number }[]>`select private.rate_limit_take(${tx.json(rules)}) as wait`;
    const wait = Number(limit?.wait ?? 0);
    if (wait > 0) return { wait, document: null };
    const [row] = await tx<{ document: Stored | null }[]>`select private.account_export(${user.id}) as document`;
    return { wait: 0, document: row?.document ?? null };
  });
  if (!outcome.document) {
    // a live session's user always exists: no document is a rate limit
    throw RATE_LIMITED.error(
      { message: `You can export your data once an hour: try again in ${describeWait(outcome.wait)}` },
      { headers: retryAfterHeader(outcome.wait) },
    );
  }
  const { transactions, notifications, ...rest } = outcome.document;
  return {
    ...rest,
    transactions: transactions.map(({ message, metadata, ...t }) => ({
      ...t,
      description: renderTransaction(message),
      metadata: metadataInNaira(metadata) as Record<string, unknown>,
    })),
    notifications: notifications.map(({ message, ...n }) => ({ ...n, content: renderNotification(message) })),
  };
}
