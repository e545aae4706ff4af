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
  description: 'Only the payments provider (Paystack), signed over the raw body. `charge.success` completes a card ' +
    "top-up or an escrow's card funding when the amount is what its transaction expects (else it is verified with " +
    'the provider or held for review), or credits a bank transfer into a virtual account to the wallet, funding ' +
    'the oldest escrow waiting for a bank transfer once the wallet covers it (else the payer is told the ' +
    'shortfall, in the app and by SMS); `transfer.success`, `transfer.failed` and `transfer.reversed` settle a ' +
    'withdrawal or an escrow payout (a failure puts the money back once, and a payee is notified); ' +
    '`dedicatedaccount.assign.*` makes the virtual account active or inactive. Each event takes effect once ' +
    'however often it is delivered; other events are recorded and ignored, and one whose effect fails is kept, ' +
    'still answered 200, so that a redelivery applies it.',
  signedBy: PAYMENTS_SIGNATURE,
  method: 'POST',
  auth: 'none',
  verify: verifyPaymentsSignature,
  body: paymentsEventSchema,
  response: webhookReceivedResponse,
  handler: ({ body, rawBody, requestId }) => webhookPayments(body, rawBody, requestId),
});
