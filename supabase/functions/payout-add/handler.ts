import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutAdd } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountResponse, payoutAddBody } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-add',
  summary: 'Saves a bank account to withdraw to, checked with the bank where the provider can',
  refusals: {
    409: 'This payout account is already saved',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'saves a payout account (and its transfer recipient at the provider)',
  body: payoutAddBody,
  response: payoutAccountResponse,
  handler: ({ user, body }) => payoutAdd(user, body),
});
