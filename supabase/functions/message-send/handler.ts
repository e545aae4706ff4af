import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { messageSend } from '../../../shared/conversations/conversations.ts';
import { feedItemResponse, messageSendBody } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'message-send',
  summary: "Sends a text message in an escrow's conversation",
  refusals: {
    404: 'No conversation the caller takes part in with this id',
    409: 'The conversation is closed to new messages',
    429: 'Too many messages; the message and Retry-After say how long to wait',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'sends a message; a repeat without a key sends it twice',
  body: messageSendBody,
  response: feedItemResponse,
  handler: ({ user, body }) => messageSend(user, body),
});
