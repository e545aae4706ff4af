import { endpoint } from '../../../shared/core/endpoint.ts';
import { VIRTUAL_ACCOUNT_NOT_FOUND } from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { virtualAccountResponse } from '../../../shared/money/schema.ts';
import { virtualAccountGet } from '../../../shared/money/wallet.ts';

export default endpoint({
  name: 'virtual-account-get',
  summary: "Reads the caller's dedicated top-up account",
  refusals: [VIRTUAL_ACCOUNT_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: virtualAccountResponse,
  handler: ({ user }) => virtualAccountGet(user),
});
