import { endpoint } from '../../../shared/endpoint.ts';
import { markRead } from '../../../shared/notifications.ts';
import { notificationReadBody, notificationReadResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'notification-read',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: notificationReadBody,
  response: notificationReadResponse,
  handler: ({ user, body }) => markRead(user.claims, body),
});
