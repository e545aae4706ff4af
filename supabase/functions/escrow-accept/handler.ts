import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowAccept } from '../../../shared/escrow/escrow.ts';
import { escrowInviteBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-accept',
  summary: 'The counterparty accepts an escrow, by its id or its invite token',
  description: "Only the invited counterparty, by the escrow's id or its `invite_token`. From `invite_pending` (they " +
    'pay) the escrow becomes `active`, accepted and waiting for their money: a pending funding transaction is ' +
    'recorded and they are notified (`payment_requested`); from `active` funded by the initiator it becomes ' +
    '`funded`. The initiator is notified (`active`) and sees `counterparty_id` from now on; no money moves, and a ' +
    'repeat is refused as the state has moved on.',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'moves no money (the payer is asked to pay; paying is `escrow-fund`); a repeat is 409',
  body: escrowInviteBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowAccept(user, body),
});
