import { endpoint } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { CONVERSATION_NOT_FOUND, CONVERSATION_READ_ONLY } from '../../../shared/conversations/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { messageSend } from '../../../shared/conversations/conversations.ts';
import { feedItemResponse, messageSendBody } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'message-send',
  summary: "Sends a text message in an escrow's conversation",
  refusals: [CONVERSATION_NOT_FOUND, CONVERSATION_READ_ONLY, RATE_LIMITED],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'sends a message; a repeat without a key sends it twice',
  body: messageSendBody,
  response: feedItemResponse,
  handler: ({ user, body }) => messageSend(user, body),
});
