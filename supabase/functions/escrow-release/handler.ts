import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowRelease } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_DELIVERED,
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_PARTY,
  ESCROW_WRONG_STATE,
} from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-release',
  summary: "The payer releases the money held to the payee, less the payee's fee",
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE, ESCROW_NOT_DELIVERED],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'pays the payee and may start a payout to their bank',
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowRelease(user, body.escrow_id),
});
