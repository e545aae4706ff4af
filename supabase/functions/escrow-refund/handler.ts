import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowRefund } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-refund',
  summary: "The payee refunds the payer: the money held goes back to the payer's wallet",
  description: 'Only the payee, while the escrow is `funded` or in `inspection`. Everything still in the hold, the ' +
    "payer's fee and VAT included, goes back to the payer's wallet, open milestones are cancelled and the escrow " +
    'is `refunded`; both parties are notified (`refunded`).',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "moves the escrow's money back to the payer's wallet",
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowRefund(user, body.escrow_id),
});
