import { endpoint } from '../../../shared/endpoint.ts';
import { listNotifications } from '../../../shared/notifications.ts';
import { notificationListQuery, notificationListResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'notification-list',
  summary: "Lists the caller's notifications, newest first",
  method: 'GET',
  auth: 'user',
  query: notificationListQuery,
  response: notificationListResponse,
  handler: ({ user, query }) => listNotifications(user.claims, query),
});
