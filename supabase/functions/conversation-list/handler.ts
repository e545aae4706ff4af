import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { conversationList } from '../../../shared/conversations/conversations.ts';
import { conversationListQuery, conversationListResponse } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'conversation-list',
  summary: "Lists the caller's conversations, most recent activity first, with unread counts",
  method: 'GET',
  auth: userSession,
  query: conversationListQuery,
  response: conversationListResponse,
  handler: ({ user, query }) => conversationList(user, query),
});
