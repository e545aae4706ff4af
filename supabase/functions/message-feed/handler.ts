import { endpoint } from '../../../shared/core/endpoint.ts';
import { CONVERSATION_NOT_FOUND } from '../../../shared/conversations/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { messageFeed } from '../../../shared/conversations/conversations.ts';
import { messageFeedQuery, messageFeedResponse } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'message-feed',
  summary: "Reads a conversation's feed: messages and system events, in order, pageable both ways",
  description: 'Either party of the escrow; to anyone else, or once the escrow is deleted, the conversation does not ' +
    "exist. The messages of both parties and the caller's own notifications of that escrow, oldest to newest " +
    'within a page: no cursor gives the newest, `before` pages back, `after` polls for newer ones. Changes ' +
    'nothing.',
  refusals: [CONVERSATION_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: messageFeedQuery,
  response: messageFeedResponse,
  handler: ({ user, query }) => messageFeed(user, query),
});
