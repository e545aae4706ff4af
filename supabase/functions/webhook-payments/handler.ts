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
  signedBy: PAYMENTS_SIGNATURE,
  method: 'POST',
  auth: 'none',
  verify: verifyPaymentsSignature,
  body: paymentsEventSchema,
  response: webhookReceivedResponse,
  handler: ({ body, rawBody, requestId }) => webhookPayments(body, rawBody, requestId),
});
