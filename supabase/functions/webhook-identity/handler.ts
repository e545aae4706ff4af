import { endpoint } from '../../../shared/core/endpoint.ts';
import { IDENTITY_TOKEN, verifyIdentityToken, webhookIdentity } from '../../../shared/kyc/webhooks.ts';
import { identityEventSchema, kycWebhookResponse } from '../../../shared/kyc/schema.ts';

export default endpoint({
  name: 'webhook-identity',
  summary: 'Receives a result from the identity-check provider',
  description: 'Only the identity-check provider, with the shared token. A result for a reference `identity-verify` ' +
    'created passes the check (`found`) or fails it (may be retried), then recomputes the tier: a change is told ' +
    'by notification (`kyc_tier_changed`) and SMS, a failure by `verification_failed`. An unknown reference, ' +
    "another type than the request's, or a request already decided changes nothing; each result takes effect once, " +
    'and a well-formed one is answered 200 whatever it said.',
  signedBy: IDENTITY_TOKEN,
  method: 'POST',
  auth: 'none',
  verify: verifyIdentityToken,
  body: identityEventSchema,
  response: kycWebhookResponse,
  handler: ({ body, requestId }) => webhookIdentity(body, requestId),
});
