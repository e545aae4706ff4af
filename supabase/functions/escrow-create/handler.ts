import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCreate, inviteTokenFor } from '../../../shared/escrow/escrow.ts';
import { escrowCreateBody, escrowCreateResponse } from '../../../shared/escrow/schema.ts';
import { COUNTERPARTY_IS_SELF } from '../../../shared/escrow/refusals.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'escrow-create',
  summary: "Creates an escrow with a counterparty's phone number, and answers its fees",
  description: 'A signed-in user at any KYC tier, who becomes the initiator; no money moves. `payer_role: initiator` ' +
    'gives a `draft`, which invites no one until it is funded; `payer_role: counterparty` gives `invite_pending` ' +
    'and invites the counterparty at once, in the app if the phone has an account and by SMS (by default at most 3 ' +
    'invite SMS a day to a phone, and 20 such escrows an hour and 100 a day per initiator). The fee breakdown is ' +
    'stored, the conversation created and the initiator notified (`escrow_created`); a repeat without an ' +
    'Idempotency-Key creates another escrow.',
  refusals: [ACCOUNT_FROZEN, COUNTERPARTY_IS_SELF, RATE_LIMITED],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  secretShownOnce: { field: 'invite_token', derive: inviteTokenFor },
  repeat: 'creates an escrow, may send an invitation SMS; a repeat without a key creates another',
  body: escrowCreateBody,
  response: escrowCreateResponse,
  handler: ({ user, body }) => escrowCreate(user, body),
});
