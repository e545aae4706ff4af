import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCreate } from '../../../shared/escrow/escrow.ts';
import { escrowCreateBody, escrowCreateResponse } from '../../../shared/escrow/schema.ts';
import { COUNTERPARTY_IS_SELF } from '../../../shared/escrow/refusals.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';

export default endpoint({
  name: 'escrow-create',
  summary: "Creates an escrow with a counterparty's phone number, and answers its fees",
  refusals: [COUNTERPARTY_IS_SELF, RATE_LIMITED],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'creates an escrow, may send an invitation SMS; a repeat without a key creates another',
  body: escrowCreateBody,
  response: escrowCreateResponse,
  handler: ({ user, body }) => escrowCreate(user, body),
});
