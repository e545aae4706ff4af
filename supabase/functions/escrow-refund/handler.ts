import { endpoint } from '../../../shared/endpoint.ts';
import { refundEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-refund',
  summary: "The payee refunds the payer: the money held goes back to the payer's wallet",
  refusals: {
    403: "The caller's role in this escrow cannot do this (e.g. the payee releasing)",
    404: 'No escrow with this id (or invite token) that the caller is a party to',
    409: "The escrow's state does not allow this now; the message says what comes first",
  },
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => refundEscrow(user, body.escrow_id),
});
