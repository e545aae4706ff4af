import { endpoint } from '../../../shared/core/endpoint.ts';
import { CONVERSATION_NOT_FOUND } from '../../../shared/conversations/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { conversationRead } from '../../../shared/conversations/conversations.ts';
import { conversationIdBody, conversationReadResponse } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'conversation-read',
  summary: 'Marks a conversation read up to now',
  description: 'Either party of the escrow; to anyone else, or once the escrow is deleted, the conversation does not ' +
    "exist. Marks the caller's own notifications of that escrow read (the other party's are untouched) and answers " +
    'how many changed; a repeat changes nothing.',
  refusals: [CONVERSATION_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'marking read again changes nothing',
  body: conversationIdBody,
  response: conversationReadResponse,
  handler: ({ user, body }) => conversationRead(user, body.conversation_id),
});
