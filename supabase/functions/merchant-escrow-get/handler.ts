import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { merchantEscrowGet } from '../../../shared/merchants/escrows.ts';
import { merchantEscrowGetQuery, merchantEscrowResponse } from '../../../shared/merchants/escrow-schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'merchant-escrow-get',
  summary: "One of the merchant's escrows, by id or by the merchant's reference",
  description: "A merchant's key, for an escrow the merchant created: `escrow_id` or `reference`, exactly one. " +
    "Another merchant's escrow, or an escrow made in the app, is 404.",
  refusals: [ESCROW_NOT_FOUND],
  method: 'GET',
  auth: merchantKey,
  query: merchantEscrowGetQuery,
  response: merchantEscrowResponse,
  handler: ({ user, query }) => merchantEscrowGet(user, query),
});
