import { endpoint } from '../../../shared/core/endpoint.ts';
import { IDENTITY_TOKEN, verifyIdentityToken, webhookIdentity } from '../../../shared/kyc/webhooks.ts';
import { identityEventSchema, kycWebhookResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'webhook-identity',
  summary: 'Receives a result from the identity-check provider',
  signedBy: IDENTITY_TOKEN,
  method: 'POST',
  auth: 'none',
  verify: verifyIdentityToken,
  body: identityEventSchema,
  response: kycWebhookResponse,
  handler: ({ body, requestId }) => webhookIdentity(body, requestId),
});
