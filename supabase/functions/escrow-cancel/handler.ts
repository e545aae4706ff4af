import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCancel } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-cancel',
  summary: "Cancels an escrow not yet both funded and accepted; money held goes back to the payer's wallet",
  description: 'Either party, while the escrow holds no money (`draft`, `invite_pending`, or `active` accepted but ' +
    'unfunded): it becomes `cancelled` and its pending funding transactions are canceled. Once the initiator ' +
    'funded it, and until the counterparty accepts, only the payer may: it becomes `refunded`, the whole hold ' +
    "(fees and VAT included) going back to the payer's wallet. Open milestones are cancelled and both parties are " +
    'notified (`cancelled`); from `funded` on it is refused.',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "a funded escrow's money goes back to the payer's wallet",
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowCancel(user, body.escrow_id),
});
