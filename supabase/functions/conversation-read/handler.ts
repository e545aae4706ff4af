import { endpoint } from '../../../shared/endpoint.ts';
import { readConversation } from '../../../shared/conversations.ts';
import { conversationIdBody, conversationReadResponse } from '../../../shared/schemas/conversations.ts';

export default endpoint({
  name: 'conversation-read',
  summary: 'Marks a conversation read up to now',
  refusals: {
    404: 'No conversation the caller takes part in with this id',
  },
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: conversationIdBody,
  response: conversationReadResponse,
  handler: ({ user, body }) => readConversation(user.claims, body.conversation_id),
});
