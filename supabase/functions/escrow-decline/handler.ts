import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowDecline } from '../../../shared/escrow/escrow.ts';
import { escrowInviteBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-decline',
  summary: 'The counterparty declines an escrow, by its id or its invite token',
  description: "Only the invited counterparty, by the escrow's id or its `invite_token`. An escrow without money " +
    '(`draft`, `invite_pending`, or `active` accepted but unfunded) becomes `cancelled` and its pending funding ' +
    'transactions are canceled; one the initiator funded that was not yet accepted becomes `refunded`, the whole ' +
    "hold (fees and VAT included) going back to the payer's wallet. Open milestones are cancelled, both parties " +
    'are notified (`declined`), and the initiator sees `counterparty_id` from now on.',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "a funded escrow's money goes back to the payer's wallet",
  body: escrowInviteBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowDecline(user, body),
});
