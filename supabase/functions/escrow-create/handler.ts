import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowCreate } from '../../../shared/escrow/escrow.ts';
import { escrowCreateBody, escrowCreateResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'escrow-create',
  summary: "Creates an escrow with a counterparty's phone number, and answers its fees",
  refusals: {
    429: 'Too many escrows created recently; the message and Retry-After say how long to wait',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'creates an escrow, may send an invitation SMS; a repeat without a key creates another',
  body: escrowCreateBody,
  response: escrowCreateResponse,
  handler: ({ user, body }) => escrowCreate(user, body),
});
