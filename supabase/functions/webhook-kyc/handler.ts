import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_SIGNATURE, verifyKycSignature, webhookKyc } from '../../../shared/kyc/webhooks.ts';
import { kycWebhookResponse, sumsubEventSchema } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'webhook-kyc',
  summary: 'Receives a review result or event from the KYC provider (Sumsub)',
  description: 'Only the KYC provider (Sumsub), signed over the raw body. A completed `applicantReviewed` of a known ' +
    'user and level records the check passed or failed (RETRY or FINAL: only a FINAL rejection withdraws a pass, ' +
    'and an older result never overrides a newer one), then recomputes the tier: a change is told by notification ' +
    '(`kyc_tier_changed`) and SMS, a failure by `verification_failed`. Each event takes effect once; any other is ' +
    'recorded and ignored, and a well-formed one is answered 200 whatever it said.',
  signedBy: KYC_SIGNATURE,
  method: 'POST',
  auth: 'none',
  verify: verifyKycSignature,
  body: sumsubEventSchema,
  response: kycWebhookResponse,
  handler: ({ body, rawBody, requestId }) => webhookKyc(body, rawBody, requestId),
});
