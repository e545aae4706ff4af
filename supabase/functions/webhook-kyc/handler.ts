import { endpoint } from '../../../shared/endpoint.ts';
import { handleSumsubEvent, verifyKycSignature } from '../../../shared/kyc/webhooks.ts';
import { kycWebhookResponse, sumsubEventSchema } from '../../../shared/schemas/kyc.ts';

export default endpoint({
  name: 'webhook-kyc',
  method: 'POST',
  auth: 'none',
  verify: verifyKycSignature,
  body: sumsubEventSchema,
  response: kycWebhookResponse,
  handler: ({ body, rawBody, requestId }) => handleSumsubEvent(body, rawBody, requestId),
});
