import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantWebhookList } from '../../../shared/merchants/webhook-endpoints.ts';
import { merchantWebhookListResponse } from '../../../shared/merchants/webhook-schema.ts';
import { MERCHANT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-webhook-list',
  summary: "Lists the caller's merchant's webhook endpoints, oldest first, never their secrets",
  description: "The merchant's owner: each endpoint with the types it gets, whether it is enabled (and when it " +
    'was disabled), since when it has been failing, and until when its previous secret still signs after a ' +
    'rotation. Changes nothing.',
  refusals: [MERCHANT_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: merchantWebhookListResponse,
  handler: ({ user }) => merchantWebhookList(user),
});
