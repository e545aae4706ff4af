import { endpoint } from '../../../shared/endpoint.ts';
import { listConversations } from '../../../shared/conversations.ts';
import { conversationListQuery, conversationListResponse } from '../../../shared/schemas/conversations.ts';

export default endpoint({
  name: 'conversation-list',
  summary: "Lists the caller's conversations, most recent activity first, with unread counts",
  method: 'GET',
  auth: 'user',
  query: conversationListQuery,
  response: conversationListResponse,
  handler: ({ user, query }) => listConversations(user.claims, query),
});
