// Request and response schemas of jobs-run.
import { z } from 'zod';
import { count, timestamp } from '../core/schema.ts';
import { timestampSchema } from '../core/validation.ts';
import { RETENTION_PURGE_KINDS } from '../compliance/retention.ts';

export const jobsRunBody = z.strictObject({
  now: timestampSchema.optional().meta({
    description:
      "The job's clock: accepted on the local stack only (400 in a deployment, which runs at the current time)",
  }),
});

/** jobs-run: what one run of the job did. */
export const jobsRunResponse = z.strictObject({
  now: timestamp,
  released: count,
  ended: count,
  disputes_reminded: count,
  disputes_escalated: count,
  disputes_released: count,
  merchant_escrows_expired: count,
  payouts_started: count,
  refunds_started: count,
  refunds_checked: count,
  sms_sent: count,
  reconciled: count,
  idempotency_keys_expired: count,
  webhooks_enqueued: count,
  webhooks_delivered: count,
  webhooks_failed: count,
  webhook_endpoints_disabled: count,
  webhooks_purged: count,
  dedicated_accounts_deactivated: count.describe(
    "Deleted users' dedicated accounts whose failed deactivation the provider accepted on a retry",
  ),
  purged: z.strictObject(Object.fromEntries(RETENTION_PURGE_KINDS.map((k) => [k, count]))).meta({
    description: 'Rows erased or deleted by the retention purges, by kind (docs/compliance.md#retention)',
  }),
});
