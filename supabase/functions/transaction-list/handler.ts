import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { transactionListQuery, transactionListResponse } from '../../../shared/money/schema.ts';
import { transactionList } from '../../../shared/money/transactions.ts';

export default endpoint({
  name: 'transaction-list',
  summary: "Lists the caller's transactions (deposits, withdrawals, escrow movements), newest first",
  description: 'A signed-in user, for their own transactions only, optionally of one `category`, `escrow_id` or ' +
    '`status`; page with `next_cursor` as `before`. Amounts and the figures in `metadata` are in naira. Changes ' +
    'nothing.',
  method: 'GET',
  auth: userSession,
  query: transactionListQuery,
  response: transactionListResponse,
  handler: ({ user, query }) => transactionList(user, query),
});
