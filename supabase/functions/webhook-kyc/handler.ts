import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_SIGNATURE, verifyKycSignature, webhookKyc } from '../../../shared/kyc/webhooks.ts';
import { kycWebhookResponse, sumsubEventSchema } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'webhook-kyc',
  summary: 'Receives a review result or event from the KYC provider (Sumsub)',
  signedBy: KYC_SIGNATURE,
  method: 'POST',
  auth: 'none',
  verify: verifyKycSignature,
  body: sumsubEventSchema,
  response: kycWebhookResponse,
  handler: ({ body, rawBody, requestId }) => webhookKyc(body, rawBody, requestId),
});
