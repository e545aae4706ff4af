import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutSetDefault } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountResponse, payoutIdBody } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-set-default',
  summary: "Makes one of the caller's payout accounts the default",
  refusals: {
    404: "No payout account of the caller's with this id",
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat sets the same default again',
  body: payoutIdBody,
  response: payoutAccountResponse,
  handler: ({ user, body }) => payoutSetDefault(user, body.payout_account_id),
});
