import { endpoint } from '../../../shared/core/endpoint.ts';
import { CONVERSATION_NOT_FOUND } from '../../../shared/conversations/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { messageFeed } from '../../../shared/conversations/conversations.ts';
import { messageFeedQuery, messageFeedResponse } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'message-feed',
  summary: "Reads a conversation's feed: messages and system events, in order, pageable both ways",
  refusals: [CONVERSATION_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: messageFeedQuery,
  response: messageFeedResponse,
  handler: ({ user, query }) => messageFeed(user, query),
});
