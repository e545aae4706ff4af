import { endpoint } from '../../../shared/endpoint.ts';
import {
  handlePaymentsEvent,
  PAYMENTS_SIGNATURE,
  paymentsEventSchema,
  verifyPaymentsSignature,
} from '../../../shared/payments/webhook.ts';
import { webhookReceivedResponse } from '../../../shared/schemas/money.ts';

export default endpoint({
  name: 'webhook-payments',
  summary: 'Receives an event from the payments provider (Paystack)',
  signedBy: PAYMENTS_SIGNATURE,
  method: 'POST',
  auth: 'none',
  verify: verifyPaymentsSignature,
  body: paymentsEventSchema,
  response: webhookReceivedResponse,
  handler: ({ body, rawBody, requestId }) => handlePaymentsEvent(body, rawBody, requestId),
});
