// Time-driven work, run by the jobs-run function (pg_cron in production, every minute by the
// local server): the SQL job private.run_jobs(now) (dispute reminders and deadlines, inspection periods that ended -> released,
// released/refunded escrows 14 days old -> ended), merchant escrows unfunded after
// MERCHANT_ESCROW_EXPIRY_HOURS -> cancelled, then the side effects that follow a commit:
// payouts and refunds to merchant escrows' buyers that were never sent to the provider, reconciliation of movements still pending long
// after they started (shared/money/reconcile.ts), queued SMS, and outbound webhooks: the event log
// read into the delivery queue, due deliveries sent and deliveries 30 days old removed
// (shared/webhooks/queue.ts), deactivations of deleted users' dedicated accounts that failed asked
// again (shared/account/delete.ts); last, the retention purges: every kind of personal data whose period
// ended is erased or deleted, at most PURGE_BATCH rows of each kind a run, with the periods of
// shared/compliance/retention.ts (the source docs/compliance.md is generated from), the KYC records
// of accounts deleted 5 years ago among them.
import { safeEqual } from '../core/crypto.ts';
import { afterCommit } from '../core/background.ts';
import { getConfig } from '../core/config.ts';
import type { HeaderAuth } from '../core/endpoint.ts';
import { asService } from '../core/db.ts';
import { INVALID_SIGNATURE } from '../core/refusals.ts';
import { log } from '../core/log.ts';
import { startEscrowPayout } from '../money/payouts.ts';
import { reconcilePending } from '../money/reconcile.ts';
import { reconcileRefunds, startRefund, strandedRefunds } from '../money/refunds.ts';
import { dispatchQueuedSms } from '../messages/sms-outbox.ts';
import { retryDeactivations } from '../account/delete.ts';
import { webhookJobStep } from '../webhooks/queue.ts';
import {
  ERASED_TEXT,
  PURGE_BATCH,
  purgePeriod,
  purgePeriods,
  RETENTION_PURGE_KINDS,
  type RetentionPurgeKind,
} from '../compliance/retention.ts';

/** The scheduler's secret header. */
export const JOBS_SECRET_HEADER: HeaderAuth = {
  scheme: 'jobsSecret',
  description: 'JOBS_SECRET, sent by the scheduler (pg_cron + pg_net) that runs the job every minute.',
  headers: [{ name: 'x-jobs-secret', required: true, description: 'The jobs secret' }],
};

export function verifyJobsSecret(req: Request): Promise<void> {
  const given = req.headers.get(JOBS_SECRET_HEADER.headers[0]?.name ?? '') ?? '';
  if (!safeEqual(given, getConfig().JOBS_SECRET)) {
    return Promise.reject(INVALID_SIGNATURE.error({ what: 'jobs secret' }));
  }
  return Promise.resolve();
}

export async function jobsRun(now: Date | string = new Date()) {
  const at = typeof now === 'string' ? now : now.toISOString();
  const rows = await asService((tx) =>
    tx<{ job: string; escrow_id: string; payout_tx: string | null }[]>`
    select * from private.run_jobs(${at}::timestamptz)`
  );
  // merchant escrows whose buyer never paid: cancelled (a payment that still comes is not applied)
  const merchantExpired = await asService((tx) =>
    tx<{ id: string }[]>`
    select id from private.merchant_escrows_expire(${at}::timestamptz, ${getConfig().MERCHANT_ESCROW_EXPIRY_HOURS}) as id`
  );
  const payouts = rows.map((r) => r.payout_tx).filter((t): t is string => !!t);
  // payouts committed but never sent (a crash between the commit and the provider call); a frozen
  // payee's wait, pending in clearing, until they are unfrozen
  const stranded = await asService((tx) =>
    tx<{ id: string }[]>`
    select id from public.transactions
     where type = 'escrow_payout' and status = 'pending' and not (metadata ? 'transfer_attempted_at')
       and not private.account_frozen(user_id)
       and created_at < ${at}::timestamptz - interval '1 minute'
     order by created_at limit 50`
  );
  for (const id of [...payouts, ...stranded.map((s) => s.id)]) {
    await afterCommit('escrow.payout', () => startEscrowPayout(id));
  }
  // refunds to merchant escrows' buyers committed but never sent (a crash before the provider call)
  const refunds = await strandedRefunds(at);
  for (const id of refunds) await afterCommit('escrow.refund', () => startRefund(id));
  // movements still pending long after they started: settled from what the provider says
  const reconciled = await reconcilePending(at);
  const refundsChecked = await reconcileRefunds(at);
  const sms = await dispatchQueuedSms(100);
  const [expired] = await asService((tx) =>
    tx<{ removed: number }[]>`
    select private.cleanup_expired(${at}::timestamptz, ${purgePeriod('idempotency_keys')}::interval, ${PURGE_BATCH})
      as removed`
  );
  // dedicated accounts of deleted users the provider did not deactivate: asked again
  const deactivated = await retryDeactivations(at);
  const webhooks = await webhookJobStep(new Date(at));
  const purged = await retentionPurge(at);
  const summary = {
    released: rows.filter((r) => r.job === 'inspection_release').length,
    ended: rows.filter((r) => r.job === 'ended').length,
    disputes_reminded: rows.filter((r) => r.job === 'dispute_reminder').length,
    disputes_escalated: rows.filter((r) => r.job === 'dispute_escalated').length,
    disputes_released: rows.filter((r) => r.job === 'dispute_auto_release').length,
    merchant_escrows_expired: merchantExpired.length,
    payouts_started: payouts.length + stranded.length,
    refunds_started: refunds.length,
    refunds_checked: refundsChecked,
    sms_sent: sms,
    reconciled: reconciled.checked,
    idempotency_keys_expired: expired?.removed ?? 0,
    ...webhooks,
    dedicated_accounts_deactivated: deactivated,
    purged,
  };
  if (
    rows.length + merchantExpired.length + summary.payouts_started + refunds.length + summary.sms_sent +
        webhooks.webhooks_enqueued +
        webhooks.webhooks_failed + deactivated + Object.values(purged).reduce((a, b) => a + b, 0) > 0
  ) {
    log.info('jobs.run', { ...summary, now: at });
  }
  return { now: at, ...summary };
}

/** The retention purges at `now`: how many rows of each kind were erased or deleted. */
async function retentionPurge(at: string): Promise<Record<RetentionPurgeKind, number>> {
  const rows = await asService((tx) =>
    tx<{ kind: RetentionPurgeKind; purged: number }[]>`
    select kind, purged from private.retention_purge(
      ${at}::timestamptz, ${tx.json(purgePeriods())}, ${PURGE_BATCH}, ${ERASED_TEXT})`
  );
  const counts = Object.fromEntries(RETENTION_PURGE_KINDS.map((k) => [k, 0])) as Record<RetentionPurgeKind, number>;
  for (const r of rows) counts[r.kind] = r.purged;
  // the KYC records of accounts deleted longer ago than their period
  const [kyc] = await asService((tx) =>
    tx<{ purged: number }[]>`
    select private.kyc_records_purge(${at}::timestamptz, ${purgePeriod('kyc_records')}::interval, ${PURGE_BATCH})
      as purged`
  );
  counts.kyc_records = kyc?.purged ?? 0;
  return counts;
}
