import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { milestoneRelease } from '../../../shared/escrow/milestones.ts';
import { milestoneIdBody, milestoneResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_PARTY,
  ESCROW_WRONG_STATE,
  MILESTONE_NOT_FOUND,
  MILESTONE_WRONG_STATE,
} from '../../../shared/escrow/refusals.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'milestone-release',
  summary: "The payer releases a completed milestone's amount to the payee",
  description: 'Only the payer (the client), for a `completed` milestone while the escrow is `funded`. The ' +
    "milestone's amount goes from the hold to the payee's wallet less its share of the seller fee, its shares of " +
    'the fees and VAT are booked, the payee is notified (`milestone_released`) and paid out to their bank as after ' +
    '`escrow-release`. When the released milestones reach the escrow amount, the escrow is `released` and both ' +
    'parties are notified (`released`).',
  refusals: [
    ACCOUNT_FROZEN,
    ESCROW_NOT_FOUND,
    ESCROW_WRONG_PARTY,
    MILESTONE_NOT_FOUND,
    ESCROW_WRONG_STATE,
    MILESTONE_WRONG_STATE,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "pays the payee the milestone's share and may start a payout to their bank",
  body: milestoneIdBody,
  response: milestoneResponse,
  handler: ({ user, body }) => milestoneRelease(user, body.milestone_id),
});
