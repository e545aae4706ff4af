import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { notificationList } from '../../../shared/notifications/notifications.ts';
import { notificationListQuery, notificationListResponse } from '../../../shared/notifications/schema.ts';

export default endpoint({
  name: 'notification-list',
  summary: "Lists the caller's notifications, newest first",
  description: 'A signed-in user, for their own notifications only, optionally of one escrow or only the unread ' +
    'ones; page with `before`. Each `content` is written from the event when it is read. Changes nothing.',
  method: 'GET',
  auth: userSession,
  query: notificationListQuery,
  response: notificationListResponse,
  handler: ({ user, query }) => notificationList(user, query),
});
