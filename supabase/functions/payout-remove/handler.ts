import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutRemove } from '../../../shared/money/payout-accounts.ts';
import { payoutIdBody, payoutRemovedResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-remove',
  summary: "Removes one of the caller's payout accounts",
  refusals: {
    404: "No payout account of the caller's with this id",
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds the account gone (404)',
  body: payoutIdBody,
  response: payoutRemovedResponse,
  handler: ({ user, body }) => payoutRemove(user, body.payout_account_id),
});
