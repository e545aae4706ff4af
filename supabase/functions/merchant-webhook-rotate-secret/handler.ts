import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWebhookRotateSecret } from '../../../shared/merchants/webhook-endpoints.ts';
import { merchantWebhookRotateBody, merchantWebhookRotateResponse } from '../../../shared/merchants/webhook-schema.ts';
import { MERCHANT_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-webhook-rotate-secret',
  summary: "Gives one of the caller's merchant's webhook endpoints a new signing secret, shown this once",
  description: "The merchant's owner, for one of its endpoints. For 24 hours every delivery carries two " +
    "signatures, the new secret's and the previous one's, so the receiver can switch at any moment of that day; " +
    'then only the new secret signs. Rotating again within the day drops the oldest secret at once.',
  refusals: [MERCHANT_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'rotates again: a secret is shown once, so none is ever kept to be answered again',
  body: merchantWebhookRotateBody,
  response: merchantWebhookRotateResponse,
  handler: ({ user, body }) => merchantWebhookRotateSecret(user, body),
});
