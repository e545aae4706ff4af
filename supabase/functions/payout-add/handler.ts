import { endpoint } from '../../../shared/core/endpoint.ts';
import {
  PAYOUT_ACCOUNT_DUPLICATE,
  PAYOUT_ACCOUNT_NAME_MISMATCH,
  PAYOUT_ACCOUNT_UNKNOWN_AT_BANK,
} from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutAdd } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountResponse, payoutAddBody } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'payout-add',
  summary: 'Saves a bank account to withdraw to, checked with the bank where the provider can',
  refusals: [PAYOUT_ACCOUNT_DUPLICATE, PAYOUT_ACCOUNT_NAME_MISMATCH, PAYOUT_ACCOUNT_UNKNOWN_AT_BANK],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'saves a payout account (and its transfer recipient at the provider)',
  body: payoutAddBody,
  response: payoutAccountResponse,
  handler: ({ user, body }) => payoutAdd(user, body),
});
