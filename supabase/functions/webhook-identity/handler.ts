import { endpoint } from '../../../shared/endpoint.ts';
import { handleIdentityEvent, verifyIdentityToken } from '../../../shared/kyc/webhooks.ts';
import { identityEventSchema, kycWebhookResponse } from '../../../shared/schemas/kyc.ts';

export default endpoint({
  name: 'webhook-identity',
  method: 'POST',
  auth: 'none',
  verify: verifyIdentityToken,
  body: identityEventSchema,
  response: kycWebhookResponse,
  handler: ({ body, requestId }) => handleIdentityEvent(body, requestId),
});
