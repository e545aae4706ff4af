import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminSearch } from '../../../shared/operators/reads.ts';
import { OPERATOR_NOT_FOUND } from '../../../shared/operators/refusals.ts';
import { adminSearchQuery, adminSearchResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-search',
  summary: 'Finds users and escrows by phone, id or payment reference',
  description:
    'Operators of any role with a second-factor pass (to anyone who is not an operator the function does not ' +
    'exist). `q` is a phone (`0803...` or `+234803...`, exact), a user id or an escrow id, or the reference of a ' +
    "payment or transfer (its transaction id, or the provider's own reference), which leads to its user and " +
    'escrow; at most 20 of each. Each search is written to the admin audit log (`user.search`: what `q` was taken ' +
    'for and the ids found, never `q` itself).',
  refusals: [OPERATOR_NOT_FOUND],
  method: 'GET',
  auth: operatorMode(),
  query: adminSearchQuery,
  response: adminSearchResponse,
  handler: ({ user, query }) => adminSearch(user, query.q),
});
