import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWebhookCreate } from '../../../shared/merchants/webhook-endpoints.ts';
import { merchantWebhookCreateBody, merchantWebhookCreateResponse } from '../../../shared/merchants/webhook-schema.ts';
import { MERCHANT_FROZEN, MERCHANT_NOT_FOUND, WEBHOOK_ENDPOINT_LIMIT } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-webhook-create',
  summary: "Registers a webhook endpoint of the caller's merchant; its signing secret is shown this once",
  description: "The merchant's owner. The merchant's escrow events of the types asked for (all without " +
    '`event_types`) are sent to the URL as signed POSTs (docs/webhooks.md). The secret (`whsec_...`) is answered ' +
    'this once and kept only encrypted; a lost one is rotated (merchant-webhook-rotate-secret). A merchant has at ' +
    'most 10 endpoints.',
  refusals: [MERCHANT_NOT_FOUND, MERCHANT_FROZEN, WEBHOOK_ENDPOINT_LIMIT],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: false,
  repeat: 'registers another endpoint with another secret: a secret is shown once, so none is ever kept to be ' +
    'answered again',
  body: merchantWebhookCreateBody,
  response: merchantWebhookCreateResponse,
  handler: ({ user, body }) => merchantWebhookCreate(user, body),
});
