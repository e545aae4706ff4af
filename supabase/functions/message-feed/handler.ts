import { endpoint } from '../../../shared/endpoint.ts';
import { messageFeed } from '../../../shared/conversations.ts';
import { messageFeedQuery, messageFeedResponse } from '../../../shared/schemas/conversations.ts';

export default endpoint({
  name: 'message-feed',
  method: 'GET',
  auth: 'user',
  query: messageFeedQuery,
  response: messageFeedResponse,
  handler: ({ user, query }) => messageFeed(user.claims, query),
});
