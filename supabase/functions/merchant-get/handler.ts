import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantGet } from '../../../shared/merchants/merchants.ts';
import { merchantGetResponse } from '../../../shared/merchants/schema.ts';
import { MERCHANT_NOT_FOUND } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-get',
  summary: "Answers the caller's merchant account",
  description: 'A signed-in user who owns a merchant: its id, name, status and creation time. Changes nothing.',
  refusals: [MERCHANT_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: merchantGetResponse,
  handler: ({ user }) => merchantGet(user),
});
