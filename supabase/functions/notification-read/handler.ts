import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { notificationRead } from '../../../shared/notifications/notifications.ts';
import { notificationReadBody, notificationReadResponse } from '../../../shared/notifications/schema.ts';

export default endpoint({
  name: 'notification-read',
  summary: 'Marks notifications read: one by notification_id, or all of one escrow by escrow_id',
  refusals: {
    404: "No notification of the caller's with this id",
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'marking read again changes nothing',
  body: notificationReadBody,
  response: notificationReadResponse,
  handler: ({ user, body }) => notificationRead(user, body),
});
