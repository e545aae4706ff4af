// The example of docs/adding-a-function.md (step 3), kept here so that tsc type-checks it (the
// imports resolve as from supabase/functions/escrow-create/). tests/unit/docs-example.test.ts
// fails when this code and the document's block differ; change both together.
import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCreate } from '../../../shared/escrow/escrow.ts';
import { escrowCreateBody, escrowCreateResponse } from '../../../shared/escrow/schema.ts';
import { COUNTERPARTY_IS_SELF } from '../../../shared/escrow/refusals.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';

export default endpoint({
  name: 'escrow-create', // the folder name
  summary: "Creates an escrow with a counterparty's phone number, and answers its fees", // the reference's line
  // who may call it, in which states, what it changes (tests/unit/operation-descriptions.test.ts)
  description: 'A signed-in user at any KYC tier, who becomes the initiator; no money moves. `payer_role: initiator` ' +
    'gives a `draft`, which invites no one until it is funded; `payer_role: counterparty` gives `invite_pending` ' +
    'and invites the counterparty at once, in the app if the phone has an account and by SMS (by default at most 3 ' +
    'invite SMS a day to a phone, and 20 such escrows an hour and 100 a day per initiator). The fee breakdown is ' +
    'stored, the conversation created and the initiator notified (`escrow_created`); a repeat without an ' +
    'Idempotency-Key creates another escrow.',
  // what the handler or its SQL refuses with, beyond what every endpoint answers (docs/errors.md)
  refusals: [COUNTERPARTY_IS_SELF, RATE_LIMITED],
  method: 'POST',
  auth: userSession, // a bearer token of a live session; 'none' for public and webhook endpoints
  status: 201, // only for creations; 200 otherwise (the default)
  idempotent: true, // POSTs that move money or create a resource honour Idempotency-Key
  //                   ('provider' when the handler calls a provider: see the README)
  repeat: 'creates an escrow, may send an invitation SMS; a repeat without a key creates another', // README
  body: escrowCreateBody, // or query: ... for a GET
  response: escrowCreateResponse, // the `data` of the success envelope
  handler: ({ user, body }) => escrowCreate(user, body),
});
