import { endpoint } from '../../../shared/endpoint.ts';
import { acceptEscrow } from '../../../shared/escrow.ts';
import { escrowInviteBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-accept',
  summary: 'The counterparty accepts an escrow, by its id or its invite token',
  refusals: {
    403: "The caller's role in this escrow cannot do this (e.g. the payee releasing)",
    404: 'No escrow with this id (or invite token) that the caller is a party to',
    409: "The escrow's state does not allow this now; the message says what comes first",
  },
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: escrowInviteBody,
  response: escrowResponse,
  handler: ({ user, body }) => acceptEscrow(user, body),
});
