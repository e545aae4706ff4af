import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { notificationList } from '../../../shared/notifications/notifications.ts';
import { notificationListQuery, notificationListResponse } from '../../../shared/notifications/schema.ts';

export default endpoint({
  name: 'notification-list',
  summary: "Lists the caller's notifications, newest first",
  method: 'GET',
  auth: userSession,
  query: notificationListQuery,
  response: notificationListResponse,
  handler: ({ user, query }) => notificationList(user, query),
});
