import { endpoint } from '../../../shared/core/endpoint.ts';
import {
  PAYMENTS_SIGNATURE,
  paymentsEventSchema,
  verifyPaymentsSignature,
  webhookPayments,
} from '../../../shared/money/payments/webhook.ts';
import { webhookReceivedResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'webhook-payments',
  summary: 'Receives an event from the payments provider (Paystack)',
  description: 'Only the payments provider (Paystack), signed over the raw body; each event takes effect once, ' +
    "however often it is delivered. `charge.success` completes a card top-up or an escrow's card funding (a charge " +
    'whose amount differs is verified with the provider or held for review), or credits a bank transfer to the ' +
    "virtual account's owner, funding their oldest escrow waiting for one when the wallet now covers it (else " +
    'telling them the shortfall). `transfer.*` settles a withdrawal or an escrow payout (a failure or reversal ' +
    'puts the money back in the wallet once), and `dedicatedaccount.assign.*` makes the virtual account active or ' +
    'inactive. Other events are recorded and ignored; one whose effect fails is kept and still answered 200, so ' +
    'that a redelivery applies it.',
  signedBy: PAYMENTS_SIGNATURE,
  method: 'POST',
  auth: 'none',
  verify: verifyPaymentsSignature,
  body: paymentsEventSchema,
  response: webhookReceivedResponse,
  handler: ({ body, rawBody, requestId }) => webhookPayments(body, rawBody, requestId),
});
