import { endpoint } from '../../../shared/core/endpoint.ts';
import { PAYOUT_ACCOUNT_NOT_FOUND } from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutRemove } from '../../../shared/money/payout-accounts.ts';
import { payoutIdBody, payoutRemovedResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-remove',
  summary: "Removes one of the caller's payout accounts",
  description: "A signed-in user, for one of their own payout accounts (anyone else's is unknown to them). When it " +
    'was the default, the newest remaining account becomes the default.',
  refusals: [PAYOUT_ACCOUNT_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds the account gone (404)',
  body: payoutIdBody,
  response: payoutRemovedResponse,
  handler: ({ user, body }) => payoutRemove(user, body.payout_account_id),
});
