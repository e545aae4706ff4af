// `npm run docs:notifications`: writes docs/notifications.md from shared/notification-events.ts.
import { renderNotificationsDoc } from '../shared/notification-events.ts';

await Deno.writeTextFile(new URL('../docs/notifications.md', import.meta.url), renderNotificationsDoc());
console.log('docs/notifications.md written');
