// The refusals of a merchant's webhook endpoints and their deliveries (docs/merchants.md#webhook-endpoints).
// Another merchant's endpoint or delivery is not found, never forbidden: nothing tells it exists.
import { refusal } from '../core/http.ts';

export const WEBHOOK_ENDPOINT_NOT_FOUND = refusal<{ field: string }>({
  code: 'webhook_endpoint_not_found',
  status: 404,
  when: "The endpoint named is not one of the caller's merchant's webhook endpoints",
  then: 'List the endpoints (merchant-webhook-list) and name one of them',
  message: () => 'Webhook endpoint not found',
  details: (f) => [{ field: f.field, message: "is not one of your merchant's webhook endpoints" }],
  example: { field: 'endpoint_id' },
});

export const WEBHOOK_ENDPOINT_LIMIT = refusal<{ limit: number }>({
  code: 'webhook_endpoint_limit',
  status: 409,
  when: 'The merchant already has as many webhook endpoints as a merchant may',
  then: 'Delete one it no longer needs (merchant-webhook-delete), or send more event types to one endpoint',
  message: (f) => `A merchant may have at most ${f.limit} webhook endpoints`,
  example: { limit: 10 },
});

export const WEBHOOK_DELIVERY_NOT_FOUND = refusal<{ field: string }>({
  code: 'webhook_delivery_not_found',
  status: 404,
  when: "The delivery named is not one of the merchant's endpoints' deliveries (or was removed after 30 days)",
  then: 'List the deliveries (webhook-delivery-list) and name one of them',
  message: () => 'Webhook delivery not found',
  details: (f) => [{ field: f.field, message: "is not a delivery of your merchant's webhook endpoints" }],
  example: { field: 'delivery_id' },
});

export const WEBHOOK_DELIVERY_SUCCEEDED = refusal<{ delivery_id: string }>({
  code: 'webhook_delivery_succeeded',
  status: 409,
  when: 'The delivery already succeeded: the receiver answered 2xx',
  then: 'Nothing to retry; a receiver that lost the event reads the escrow instead',
  message: () => 'This delivery already succeeded',
  example: { delivery_id: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f' },
});
