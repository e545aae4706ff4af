import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { webhookDeliveryList } from '../../../shared/merchants/webhook-endpoints.ts';
import { webhookDeliveryListQuery, webhookDeliveryListResponse } from '../../../shared/merchants/webhook-schema.ts';
import { WEBHOOK_DELIVERY_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'webhook-delivery-list',
  summary: "Lists the deliveries of the key's merchant's webhook endpoints, newest first",
  description: "A merchant's key: each delivery (one event to one endpoint) with its state, its attempts and the " +
    "last attempt's outcome (the receiver's status, the reason it failed, the first 4 KiB of its answer), " +
    'optionally of one endpoint or one state; page with `before` (the last id of the page before). Deliveries are ' +
    'kept 30 days. Changes nothing.',
  refusals: [WEBHOOK_ENDPOINT_NOT_FOUND, WEBHOOK_DELIVERY_NOT_FOUND],
  method: 'GET',
  auth: merchantKey,
  query: webhookDeliveryListQuery,
  response: webhookDeliveryListResponse,
  handler: ({ user, query }) => webhookDeliveryList(user, query),
});
