import { endpoint } from '../../../shared/endpoint.ts';
import { sendMessage } from '../../../shared/conversations.ts';
import { feedItemResponse, messageSendBody } from '../../../shared/schemas/conversations.ts';

export default endpoint({
  name: 'message-send',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: messageSendBody,
  response: feedItemResponse,
  handler: ({ user, body }) => sendMessage(user, body),
});
