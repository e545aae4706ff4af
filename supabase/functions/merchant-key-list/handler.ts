import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantKeyList } from '../../../shared/merchants/merchants.ts';
import { merchantKeyListResponse } from '../../../shared/merchants/schema.ts';
import { MERCHANT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-key-list',
  summary: "Lists the caller's merchant's live API keys, newest first, never the keys themselves",
  description: "The merchant's owner: each key that is not revoked, with its name, its visible prefix and when " +
    'it last authenticated a request (kept to the minute). Changes nothing.',
  refusals: [MERCHANT_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: merchantKeyListResponse,
  handler: ({ user }) => merchantKeyList(user),
});
