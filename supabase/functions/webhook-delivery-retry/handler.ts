import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { webhookDeliveryRetry } from '../../../shared/merchants/webhook-endpoints.ts';
import { webhookDeliveryRetryBody, webhookDeliveryRetryResponse } from '../../../shared/merchants/webhook-schema.ts';
import { WEBHOOK_DELIVERY_NOT_FOUND, WEBHOOK_DELIVERY_SUCCEEDED } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'webhook-delivery-retry',
  summary: "Sends one of the key's merchant's failed or pending webhook deliveries again, now",
  description: "A merchant's key, for a delivery of its endpoints: it is due at once and starts a new series of " +
    'attempts (the full schedule again), with the same `webhook-id`. A delivery of a disabled endpoint waits ' +
    'until the endpoint is enabled.',
  refusals: [WEBHOOK_DELIVERY_NOT_FOUND, WEBHOOK_DELIVERY_SUCCEEDED],
  method: 'POST',
  auth: merchantKey,
  idempotent: true,
  repeat: 'a repeat starts the series over again; after it succeeded, 409',
  body: webhookDeliveryRetryBody,
  response: webhookDeliveryRetryResponse,
  handler: ({ user, body }) => webhookDeliveryRetry(user, body),
});
