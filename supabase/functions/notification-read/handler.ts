import { endpoint } from '../../../shared/core/endpoint.ts';
import { NOTIFICATION_ESCROW_NOT_FOUND, NOTIFICATION_NOT_FOUND } from '../../../shared/notifications/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { notificationRead } from '../../../shared/notifications/notifications.ts';
import { notificationReadBody, notificationReadResponse } from '../../../shared/notifications/schema.ts';

export default endpoint({
  name: 'notification-read',
  summary: 'Marks notifications read: one by notification_id, or all of one escrow by escrow_id',
  description: 'A signed-in user, for their own notifications only: one by `notification_id`, or every unread one of ' +
    'an escrow they are a party to by `escrow_id`. Marking read again changes nothing.',
  refusals: [NOTIFICATION_NOT_FOUND, NOTIFICATION_ESCROW_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'marking read again changes nothing',
  body: notificationReadBody,
  response: notificationReadResponse,
  handler: ({ user, body }) => notificationRead(user, body),
});
