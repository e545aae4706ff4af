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
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'escrow-release',
  summary: "The payer releases the money held to the payee, less the payee's fee",
  description: 'Only the payer, while the escrow is `funded` or in `inspection` (an `auto_dealership` escrow once ' +
    "the delivery is recorded). What is not yet released goes from the hold to the payee's wallet less the rest of " +
    'the seller fee, the fees and VAT are booked, agreed milestones are released with it, and the escrow is ' +
    '`released`; both parties are notified (`released`). A payee at KYC tier 1 or above with a default payout ' +
    'account is paid out to their bank at once; otherwise the money stays in their wallet and they may be told to ' +
    'verify (`verification_needed`).',
  refusals: [ACCOUNT_FROZEN, ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE, ESCROW_NOT_DELIVERED],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: 'pays the payee and may start a payout to their bank',
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowRelease(user, body.escrow_id),
});
