import { endpoint } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED } from '../../../shared/core/refusals.ts';
import { CONVERSATION_NOT_FOUND, CONVERSATION_READ_ONLY } from '../../../shared/conversations/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { messageSend } from '../../../shared/conversations/conversations.ts';
import { feedItemResponse, messageSendBody } from '../../../shared/conversations/schema.ts';

export default endpoint({
  name: 'message-send',
  summary: "Sends a text message in an escrow's conversation",
  description: 'Either party of the escrow, in any state but `deleted`; 30 days after the deal closed (released, ' +
    'refunded or cancelled) the conversation is read-only. At most 30 messages a minute and 600 an hour per sender ' +
    'by default. The message is stored and answered as the feed shows it, with no notification or SMS; in a ' +
    'dispute under negotiation a message of the payer counts as taking part, and a repeat without an ' +
    'Idempotency-Key sends it twice.',
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
