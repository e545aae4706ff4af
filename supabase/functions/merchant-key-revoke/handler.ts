import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantKeyRevoke } from '../../../shared/merchants/merchants.ts';
import { merchantKeyRevokeBody, merchantKeyRevokeResponse } from '../../../shared/merchants/schema.ts';
import { MERCHANT_KEY_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-key-revoke',
  summary: "Revokes one of the caller's merchant's API keys",
  description: "The merchant's owner, for one of its keys (anyone else's is unknown to them). The key is refused " +
    '(401) from the next request on; requests it already started finish.',
  refusals: [MERCHANT_KEY_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds the key revoked and answers when it was',
  body: merchantKeyRevokeBody,
  response: merchantKeyRevokeResponse,
  handler: ({ user, body }) => merchantKeyRevoke(user, body),
});
