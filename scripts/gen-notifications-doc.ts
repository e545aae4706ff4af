// `npm run docs:notifications`: writes docs/notifications.md from shared/messages/catalog.ts.
import { renderNotificationsDoc } from './lib/spec/notifications-doc.ts';

await Deno.writeTextFile(new URL('../docs/notifications.md', import.meta.url), renderNotificationsDoc());
console.log('docs/notifications.md written');
