import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWebhookDelete } from '../../../shared/merchants/webhook-endpoints.ts';
import { merchantWebhookDeleteBody, merchantWebhookDeleteResponse } from '../../../shared/merchants/webhook-schema.ts';
import { MERCHANT_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-webhook-delete',
  summary: "Removes one of the caller's merchant's webhook endpoints and its deliveries",
  description: "The merchant's owner, for one of its endpoints (anyone else's is unknown to them). Its pending " +
    'deliveries are never sent, and its delivery log goes with it.',
  refusals: [MERCHANT_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'a repeat finds the endpoint gone (404)',
  body: merchantWebhookDeleteBody,
  response: merchantWebhookDeleteResponse,
  handler: ({ user, body }) => merchantWebhookDelete(user, body),
});
