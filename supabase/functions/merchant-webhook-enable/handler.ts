import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWebhookEnable } from '../../../shared/merchants/webhook-endpoints.ts';
import { merchantWebhookEnableBody, merchantWebhookEnableResponse } from '../../../shared/merchants/webhook-schema.ts';
import { MERCHANT_FROZEN, MERCHANT_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-webhook-enable',
  summary: "Turns one of the caller's merchant's webhook endpoints back on",
  description: "The merchant's owner, for one of its endpoints: after it was disabled for failing more than 5 " +
    'days, it gets new events again, its failing run is forgotten and its pending deliveries are due at once. ' +
    'An enabled endpoint stays as it is, and its pending deliveries are due at once too.',
  refusals: [MERCHANT_NOT_FOUND, MERCHANT_FROZEN, WEBHOOK_ENDPOINT_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'enabling again changes nothing but making its pending deliveries due at once again',
  body: merchantWebhookEnableBody,
  response: merchantWebhookEnableResponse,
  handler: ({ user, body }) => merchantWebhookEnable(user, body),
});
