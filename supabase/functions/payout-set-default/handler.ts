import { endpoint } from '../../../shared/core/endpoint.ts';
import { PAYOUT_ACCOUNT_NOT_FOUND } from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutSetDefault } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountResponse, payoutIdBody } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-set-default',
  summary: "Makes one of the caller's payout accounts the default",
  description: 'A signed-in user, for one of their own payout accounts; the previous default stops being one. Escrow ' +
    'releases pay out to the default account, and `wallet-withdraw` sends to it when no `payout_account_id` is ' +
    'given.',
  refusals: [PAYOUT_ACCOUNT_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat sets the same default again',
  body: payoutIdBody,
  response: payoutAccountResponse,
  handler: ({ user, body }) => payoutSetDefault(user, body.payout_account_id),
});
