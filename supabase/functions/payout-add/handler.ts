import { endpoint } from '../../../shared/core/endpoint.ts';
import {
  PAYOUT_ACCOUNT_DUPLICATE,
  PAYOUT_ACCOUNT_NAME_MISMATCH,
  PAYOUT_ACCOUNT_UNKNOWN_AT_BANK,
} from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { payoutAdd } from '../../../shared/money/payout-accounts.ts';
import { payoutAccountResponse, payoutAddBody } from '../../../shared/money/schema.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'payout-add',
  summary: 'Saves a bank account to withdraw to, checked with the bank where the provider can',
  description: 'A signed-in user, at any KYC tier; the same bank account twice is refused before the provider is ' +
    "asked. Where the provider resolves the account, the bank's name for it must match `account_name` and is " +
    'stored as the bank writes it (`verified`); when the provider cannot be reached the account is kept ' +
    'unverified. A transfer recipient is created at the provider (or at the first payout), and the first account ' +
    'becomes the default.',
  refusals: [ACCOUNT_FROZEN, PAYOUT_ACCOUNT_DUPLICATE, PAYOUT_ACCOUNT_NAME_MISMATCH, PAYOUT_ACCOUNT_UNKNOWN_AT_BANK],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: 'provider',
  repeat: 'saves a payout account (and its transfer recipient at the provider)',
  body: payoutAddBody,
  response: payoutAccountResponse,
  handler: ({ user, body }) => payoutAdd(user, body),
});
