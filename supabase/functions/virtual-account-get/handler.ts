import { endpoint } from '../../../shared/core/endpoint.ts';
import { VIRTUAL_ACCOUNT_NOT_FOUND } from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { virtualAccountResponse } from '../../../shared/money/schema.ts';
import { virtualAccountGet } from '../../../shared/money/wallet.ts';

export default endpoint({
  name: 'virtual-account-get',
  summary: "Reads the caller's dedicated top-up account",
  description: 'A signed-in user, about their own dedicated account: its status (`pending`, `active`, or `inactive` ' +
    'with the failure reason) and, once active, where to send bank transfers, which are credited to the wallet. ' +
    'Changes nothing.',
  refusals: [VIRTUAL_ACCOUNT_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: virtualAccountResponse,
  handler: ({ user }) => virtualAccountGet(user),
});
