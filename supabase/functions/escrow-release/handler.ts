import { endpoint } from '../../../shared/endpoint.ts';
import { releaseEscrow } from '../../../shared/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-release',
  summary: "The payer releases the money held to the payee, less the payee's fee",
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
  handler: ({ user, body }) => releaseEscrow(user, body.escrow_id),
});
