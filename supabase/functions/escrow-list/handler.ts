import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowList } from '../../../shared/escrow/escrow.ts';
import { escrowListQuery, escrowListResponse } from '../../../shared/escrow/schema.ts';

export default endpoint({
  name: 'escrow-list',
  summary: "Lists the caller's escrows, newest first",
  description: 'A signed-in user, for the escrows they are a party to on either side, in every state but `deleted` ' +
    "(asked for with `status=deleted`), each with its conversation; page with `before` (the last item's " +
    '`created_at`). To the initiator `counterparty_id` stays null until the counterparty accepts or declines.',
  method: 'GET',
  auth: userSession,
  query: escrowListQuery,
  response: escrowListResponse,
  handler: ({ user, query }) => escrowList(user, query),
});
