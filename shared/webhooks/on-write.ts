// Outbound webhooks are attempted right after the write that caused them: every function's entry
// (its generated index.ts, and the local server) imports this file, which has the wake-up that
// follows each write request (shared/core/wake.ts, at most one per 100 ms per instance) also enqueue
// the log's new events for the endpoints that want them and attempt what is due
// (kickWebhookDeliveries: one run at a time, bounded). The job does the same every minute, so
// nothing waits on an instance that stopped.
// WEBHOOK_SEND_AFTER_WRITES=false leaves them to the job (the test stack).
import { getConfig } from '../core/config.ts';
import { onLocalWake } from '../core/wake.ts';
import { kickWebhookDeliveries } from './queue.ts';

onLocalWake(() => {
  if (getConfig().WEBHOOK_SEND_AFTER_WRITES === 'true') void kickWebhookDeliveries();
});
