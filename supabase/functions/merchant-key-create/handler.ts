import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantKeyCreate } from '../../../shared/merchants/merchants.ts';
import { merchantKeyCreateBody, merchantKeyCreateResponse } from '../../../shared/merchants/schema.ts';
import { MERCHANT_FROZEN, MERCHANT_KEY_LIMIT, MERCHANT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-key-create',
  summary: "Makes an API key for the caller's merchant, shown this once",
  description: "The merchant's owner. The key (`esk_live_` and 40 random letters and digits; `esk_test_` on a " +
    "deployment with sandbox providers) authenticates the merchant's servers as `Authorization: Bearer <key>`; " +
    'it is answered this once and only its SHA-256 is kept, so a lost key is revoked and replaced, never shown ' +
    'again. A merchant may hold up to 10 live keys (one per server, or an old and a new during a rotation); each ' +
    'has its own rate limit.',
  refusals: [MERCHANT_NOT_FOUND, MERCHANT_FROZEN, MERCHANT_KEY_LIMIT],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: false,
  repeat: 'makes another key: a key is shown once, so none is ever kept to be answered again',
  body: merchantKeyCreateBody,
  response: merchantKeyCreateResponse,
  handler: ({ user, body }) => merchantKeyCreate(user, body),
});
