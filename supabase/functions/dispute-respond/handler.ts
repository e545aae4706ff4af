import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { disputeRespond } from '../../../shared/disputes/disputes.ts';
import { disputeRespondBody, disputeResponse } from '../../../shared/disputes/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';
import {
  DISPUTE_NOT_OPEN,
  DISPUTE_WRONG_PARTY,
  DISPUTE_WRONG_STATE,
  PROPOSAL_NOT_FOUND,
  PROPOSAL_NOT_OPEN,
} from '../../../shared/disputes/refusals.ts';

export default endpoint({
  name: 'dispute-respond',
  summary: "Accepts or rejects the other party's open proposal",
  description: 'Only the party who did not make the proposal, while it is open and the dispute in `negotiation`. ' +
    'Rejecting tells the proposer (`dispute_proposal_rejected`). Accepting settles at once over what is still held ' +
    '(a release as `escrow-release`; a refund of the whole hold; a split paying the payee `payee_amount` less its ' +
    'seller fee and the payer the rest with its fee and VAT): the escrow is `released` or `refunded`, open ' +
    "proposals close, both parties are told what they received (`dispute_resolved` and SMS), and the payee's share " +
    'goes on to their bank as after a release.',
  refusals: [
    ESCROW_NOT_FOUND,
    DISPUTE_WRONG_PARTY,
    PROPOSAL_NOT_FOUND,
    DISPUTE_NOT_OPEN,
    DISPUTE_WRONG_STATE,
    PROPOSAL_NOT_OPEN,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'accepting settles the dispute and moves the money',
  body: disputeRespondBody,
  response: disputeResponse,
  handler: ({ user, body }) => disputeRespond(user, body),
});
