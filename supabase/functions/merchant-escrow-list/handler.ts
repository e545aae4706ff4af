import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { merchantEscrowList } from '../../../shared/merchants/escrows.ts';
import { merchantEscrowListQuery, merchantEscrowListResponse } from '../../../shared/merchants/escrow-schema.ts';

export default endpoint({
  name: 'merchant-escrow-list',
  summary: "Lists the merchant's escrows, newest first",
  description: "A merchant's key, for the escrows the merchant created, in every state but `deleted` (asked for " +
    "with `status`); `limit` 1 to 50 (20 by default); page with `before` (the last item's `created_at`).",
  method: 'GET',
  auth: merchantKey,
  query: merchantEscrowListQuery,
  response: merchantEscrowListResponse,
  handler: ({ user, query }) => merchantEscrowList(user, query),
});
