import { endpoint } from '../../../shared/endpoint.ts';
import { transactionListQuery, transactionListResponse } from '../../../shared/schemas/money.ts';
import { listTransactions } from '../../../shared/transactions.ts';

export default endpoint({
  name: 'transaction-list',
  summary: "Lists the caller's transactions (deposits, withdrawals, escrow movements), newest first",
  method: 'GET',
  auth: 'user',
  query: transactionListQuery,
  response: transactionListResponse,
  handler: ({ user, query }) => listTransactions(user.claims, query),
});
