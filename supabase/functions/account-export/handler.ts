import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { accountExport } from '../../../shared/account/export.ts';
import { accountExportResponse } from '../../../shared/account/schema.ts';

export default endpoint({
  name: 'account-export',
  summary: 'Exports everything the service holds about the caller as one JSON document',
  description: 'A signed-in user, for their own account only, at most once an hour: profile, escrows, messages, ' +
    'reviews, disputes, money, KYC checks (identity numbers by their last 3 digits), sessions, merchants, SMS ' +
    'and events. Other people appear by their ids only, and a counterparty sees the invited phone masked. ' +
    'Changes nothing but the hourly allowance; the document is never stored.',
  refusals: [RATE_LIMITED],
  method: 'GET',
  auth: userSession,
  response: accountExportResponse,
  handler: ({ user }) => accountExport(user),
});
