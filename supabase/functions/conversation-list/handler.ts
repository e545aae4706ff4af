import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { conversationList } from '../../../shared/conversations/conversations.ts';
import { conversationListQuery, conversationListResponse } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'conversation-list',
  summary: "Lists the caller's conversations, most recent activity first, with unread counts",
  description: 'A signed-in user, for the conversations of the escrows they are a party to (deleted escrows left ' +
    "out), each with its newest feed item and the caller's unread notifications in it; page with `before` on " +
    "`last_activity_at`. An initiator sees the counterparty's name once they accepted, declined or wrote. Changes " +
    'nothing.',
  method: 'GET',
  auth: userSession,
  query: conversationListQuery,
  response: conversationListResponse,
  handler: ({ user, query }) => conversationList(user, query),
});
