import { endpoint } from '../../../shared/core/endpoint.ts';
import { transactionListQuery, transactionListResponse } from '../../../shared/money/schema.ts';
import { listTransactions } from '../../../shared/money/transactions.ts';

export default endpoint({
  name: 'transaction-list',
  summary: "Lists the caller's transactions (deposits, withdrawals, escrow movements), newest first",
  method: 'GET',
  auth: 'user',
  query: transactionListQuery,
  response: transactionListResponse,
  handler: ({ user, query }) => listTransactions(user.claims, query),
});
