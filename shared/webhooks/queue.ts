// The outbound webhook queue (docs/webhooks.md#the-delivery-queue): escrow events of the log become
// delivery rows (private.webhook_enqueue), and due deliveries are sent, one attempt each, and their
// outcome recorded (private.webhook_claim, private.webhook_record; the SQL is in
// supabase/migrations/20261127160000_webhook_queue.sql). Three callers drive it:
// - kickWebhookDeliveries, after a write request has committed: at most one run per instance at a
//   time, later calls coalesced into the run after it;
// - the job (shared/jobs/jobs.ts, webhookJobStep) every minute at its explicit `now`: what the kicks
//   left, the retries that came due, and the 30-day purge;
// - tests, which call enqueueFromLog and deliverDue with a resolver and a fetch of their own.
//
// A delivery is leased, not held in an open transaction: a transaction open for as long as a
// receiver takes would hold back every reader of the event log (its horizon). The lease runs past
// the attempt's deadline; an instance that dies mid-attempt leaves the delivery to be claimed again
// when the lease runs out (at-least-once: the receiver may see it twice, with the same webhook-id).
import type { AuthUser } from '../auth/session.ts';
import { getConfig } from '../core/config.ts';
import { asService } from '../core/db.ts';
import { HttpError } from '../core/http.ts';
import { outsideKeyClaim } from '../core/key-claim.ts';
import { errorMessage, log } from '../core/log.ts';
import { outsideRequest } from '../core/request-session.ts';
import { purgePeriod } from '../compliance/retention.ts';
import { escrowGet } from '../escrow/escrow.ts';
import { ESCROW_NOT_FOUND } from '../escrow/refusals.ts';
import { escrowAsMerchant } from '../merchants/webhook-render.ts';
import { denoResolver, type Resolver } from './address.ts';
import type { WebhookOwnerKind } from './enums.ts';
import { deliver, DELIVERY_TIMEOUT_MS, type DeliveryOptions } from './deliver.ts';
import { nextAttemptAt } from './schedule.ts';
import { decryptSecret, importSecretKey } from './secrets.ts';
import { ROTATION_OVERLAP_MS, signingSecrets } from './sign.ts';

/** Events of the log one enqueue call reads. */
export const ENQUEUE_BATCH = 500;
/** How long a claimed delivery is held: the attempt's deadline and time to render and record it. */
export const LEASE_MS = DELIVERY_TIMEOUT_MS + 50_000;

/** The webhook-id of a delivery: one per endpoint and event, the same on every attempt. */
export function messageIdOf(deliveryId: string): string {
  return `msg_${deliveryId.replaceAll('-', '')}`;
}

// ---------------------------------------------------------------------------------------------
// Enqueueing

export type EnqueueResult = { scanned: number; enqueued: number };

/**
 * Moves the queue's cursor through the log (in (xact, id) order, below the horizon), a batch of
 * `batch` events per transaction, until the log is read or `maxBatches` batches were; each escrow
 * event becomes a delivery for every enabled endpoint of its recipients that asks for its type.
 * Concurrent callers queue on the cursor's row: none takes an event another took.
 */
export async function enqueueFromLog(
  opts: { now?: Date; batch?: number; maxBatches?: number } = {},
): Promise<EnqueueResult> {
  const batch = opts.batch ?? ENQUEUE_BATCH;
  const total: EnqueueResult = { scanned: 0, enqueued: 0 };
  for (let i = 0; i < (opts.maxBatches ?? 10); i++) {
    const at = (opts.now ?? new Date()).toISOString();
    const [r] = await asService((tx) =>
      tx<EnqueueResult[]>`select scanned, enqueued from private.webhook_enqueue(${at}::timestamptz, ${batch})`
    );
    total.scanned += r?.scanned ?? 0;
    total.enqueued += r?.enqueued ?? 0;
    if ((r?.scanned ?? 0) < batch) break;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// Delivering

type Claimed = {
  id: string;
  lease_id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  attempts: number;
  url: string;
  owner_id: string;
  owner_kind: OwnerKind;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_until: string | null;
  escrow_id: string;
  occurred_at: string;
};

export type DeliverDueOptions = {
  /** The run's clock: what is due, the next attempt's time, a rotation's overlap. The current time unless given. */
  now?: Date;
  /** At most this many attempts in the run (100 unless given). */
  max?: number;
  /** Attempts at the same time (8 unless given). */
  concurrency?: number;
  /** No new attempt starts after this many ms of the run (20 s unless given); one under way ends by its own deadline. */
  deadlineMs?: number;
  /** Names to addresses (Deno.resolveDns unless given). */
  resolver?: Resolver;
  /** What sends the request (providerFetch unless given). */
  fetch?: DeliveryOptions['fetch'];
  /** One attempt's deadline (10 s unless given). */
  timeoutMs?: number;
  /** The jitter's random source (Math.random unless given). */
  random?: () => number;
};

export type DeliverDueResult = {
  /** Attempts made. */
  attempted: number;
  /** Attempts answered 2xx. */
  succeeded: number;
  /** Attempts that failed (gone included). */
  failed: number;
  /** Deliveries failed for good in this run (their last attempt, or gone). */
  given_up: number;
  /** Endpoints disabled in this run (failing for more than 5 days). */
  endpoints_disabled: number;
};

/** The escrow as the endpoint's owner (a user) reads it with escrow-get; null when they no longer may. */
async function escrowAsOwner(ownerId: string, escrowId: string): Promise<Record<string, unknown> | null> {
  const sessionId = crypto.randomUUID();
  const user: AuthUser = {
    id: ownerId,
    phone: '',
    sessionId,
    lineage: sessionId,
    claims: { sub: ownerId, role: 'authenticated', session_id: sessionId, phone: '' },
  };
  try {
    return (await escrowGet(user, escrowId)) as unknown as Record<string, unknown>;
  } catch (err) {
    if (err instanceof HttpError && err.code === ESCROW_NOT_FOUND.code) return null;
    throw err;
  }
}

/** Whose id an endpoint's owner_id is (private.webhook_endpoints.owner_kind). */
export type OwnerKind = WebhookOwnerKind;

/**
 * How a delivery's `data` is rendered for its endpoint's owner, by the owner's kind: the escrow as
 * that owner reads it when the delivery is sent; null when they no longer may (the delivery is gone).
 */
export const renderForOwner: Record<
  OwnerKind,
  (ownerId: string, escrowId: string) => Promise<Record<string, unknown> | null>
> = {
  user: escrowAsOwner,
  merchant: escrowAsMerchant,
};

let keyCache: { value: string; key: Promise<CryptoKey> } | undefined;

/** WEBHOOK_SECRET_KEY from the configuration, imported once per value. */
function secretKey(): Promise<CryptoKey> {
  const value = getConfig().WEBHOOK_SECRET_KEY;
  if (!value) return Promise.reject(new Error('WEBHOOK_SECRET_KEY is not set'));
  if (keyCache?.value !== value) keyCache = { value, key: importSecretKey(value) };
  return keyCache.key;
}

async function secretsOf(row: Claimed, now: Date): Promise<string[]> {
  const key = await secretKey();
  const current = await decryptSecret(row.secret_encrypted, key);
  const previous = row.previous_secret_encrypted ? await decryptSecret(row.previous_secret_encrypted, key) : null;
  const rotatedAt = row.previous_secret_until
    ? new Date(Date.parse(row.previous_secret_until) - ROTATION_OVERLAP_MS)
    : null;
  return signingSecrets({ current, previous, rotatedAt }, now);
}

type Outcome = {
  ok: boolean;
  status?: number;
  reason?: string;
  excerpt: string;
  duration_ms: number;
  /** When to try again; null: this was the last attempt. */
  next: Date | null;
  /** Whether the failure is the receiver's (counts toward disabling its endpoint). */
  endpointFault: boolean;
};

/** One claimed delivery: rendered, signed, sent, and its outcome recorded under its lease. */
async function attemptOne(row: Claimed, now: Date, opts: DeliverDueOptions, tally: DeliverDueResult): Promise<void> {
  const started = performance.now();
  let outcome: Outcome;
  const data = await renderForOwner[row.owner_kind](row.owner_id, row.escrow_id);
  if (data === null) {
    // the escrow is no longer the owner's to read: nothing to send, ever
    outcome = {
      ok: false,
      reason: 'gone',
      excerpt: '',
      duration_ms: Math.round(performance.now() - started),
      next: null,
      endpointFault: false,
    };
  } else {
    let secrets: string[] | null = null;
    try {
      secrets = await secretsOf(row, now);
    } catch (err) {
      // ours to fix (WEBHOOK_SECRET_KEY changed?), not the receiver's: tried again on the schedule
      log.error('webhook.secret_unreadable', { endpoint_id: row.endpoint_id, error: errorMessage(err) });
    }
    if (secrets === null) {
      outcome = {
        ok: false,
        reason: 'secret_unreadable',
        excerpt: '',
        duration_ms: Math.round(performance.now() - started),
        next: nextAttemptAt(row.attempts + 1, now, opts.random),
        endpointFault: false,
      };
    } else {
      const result = await deliver(
        {
          url: row.url,
          id: messageIdOf(row.id),
          event: { type: row.type, data, occurredAt: new Date(row.occurred_at) },
          secrets,
        },
        {
          resolver: opts.resolver ?? denoResolver,
          local: getConfig().local,
          timeoutMs: opts.timeoutMs,
          fetch: opts.fetch,
        },
      );
      outcome = {
        ok: result.ok,
        status: result.status,
        reason: result.reason,
        // Postgres text holds no NUL: a receiver's answer may
        excerpt: result.excerpt.replaceAll('\u0000', ''),
        duration_ms: result.duration_ms,
        next: result.ok ? null : nextAttemptAt(row.attempts + 1, now, opts.random),
        endpointFault: true,
      };
    }
  }
  const [recorded] = await asService((tx) =>
    tx<{ status: string; endpoint_disabled: boolean; owner_id: string; failing_since: string | null }[]>`
      select * from private.webhook_record(
        ${row.id}::uuid, ${row.lease_id}::uuid, ${now.toISOString()}::timestamptz, ${outcome.ok},
        ${outcome.status ?? null}::integer, ${
      outcome.reason ?? null
    }, ${outcome.excerpt}, ${outcome.duration_ms}::integer,
        ${outcome.next?.toISOString() ?? null}::timestamptz, ${outcome.endpointFault})`
  );
  tally.attempted++;
  if (outcome.ok) tally.succeeded++;
  else tally.failed++;
  if (!recorded) {
    log.warn('webhook.lease_lost', { delivery_id: row.id });
    return;
  }
  if (recorded.status === 'failed') tally.given_up++;
  if (recorded.endpoint_disabled) {
    tally.endpoints_disabled++;
    // the owner is told in the log: an endpoint has no escrow to hang a notification on, and its
    // owner may be a merchant
    log.warn('webhook.endpoint_disabled', {
      endpoint_id: row.endpoint_id,
      owner_id: recorded.owner_id,
      failing_since: recorded.failing_since,
    });
  }
}

/**
 * Sends due deliveries: claims up to `concurrency` at a time (skipping those another caller holds),
 * attempts them together, records each outcome, and goes on until `max` attempts, the deadline,
 * or nothing due. A failed attempt is due again on the schedule (schedule.ts); after the last one
 * the delivery is failed.
 */
export async function deliverDue(opts: DeliverDueOptions = {}): Promise<DeliverDueResult> {
  const max = opts.max ?? 100;
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const deadlineMs = opts.deadlineMs ?? 20_000;
  const started = Date.now();
  const tally: DeliverDueResult = { attempted: 0, succeeded: 0, failed: 0, given_up: 0, endpoints_disabled: 0 };
  let claimed = 0;
  while (claimed < max && Date.now() - started < deadlineMs) {
    const now = opts.now ?? new Date();
    const rows = await asService((tx) =>
      tx<Claimed[]>`
        select id, lease_id, endpoint_id, event_id::text, type, attempts, url, owner_id, owner_kind, secret_encrypted,
               previous_secret_encrypted, previous_secret_until, escrow_id, occurred_at
          from private.webhook_claim(${now.toISOString()}::timestamptz, ${Math.min(concurrency, max - claimed)},
                                     ${`${LEASE_MS} milliseconds`}::interval)`
    );
    if (rows.length === 0) break;
    claimed += rows.length;
    await Promise.all(rows.map((row) =>
      attemptOne(row, now, opts, tally).catch((err) => {
        // our failure, not the receiver's: the lease runs out and the delivery is claimed again
        log.error('webhook.attempt_failed', { delivery_id: row.id, error: errorMessage(err) });
      })
    ));
  }
  return tally;
}

// ---------------------------------------------------------------------------------------------
// Retry, enable, purge

/** A failed (or pending) delivery starts a new series of attempts, due at `now`; false if it succeeded or is unknown. */
export async function retryDelivery(deliveryId: string, now: Date = new Date()): Promise<boolean> {
  const [r] = await asService((tx) =>
    tx<
      { ok: boolean }[]
    >`select private.webhook_delivery_retry(${deliveryId}::uuid, ${now.toISOString()}::timestamptz) as ok`
  );
  return r?.ok === true;
}

/** Turns an endpoint back on; its pending deliveries are due at `now`. How many; null if there is no such endpoint. */
export async function enableEndpoint(endpointId: string, now: Date = new Date()): Promise<number | null> {
  const [r] = await asService((tx) =>
    tx<{ due: number | null }[]>`
      select private.webhook_endpoint_enable(${endpointId}::uuid, ${now.toISOString()}::timestamptz) as due`
  );
  return r?.due ?? null;
}

/**
 * Removes deliveries older than their retention period (30 days, shared/compliance/retention.ts)
 * before `now`, at most `limit`; how many.
 */
export async function purgeDeliveries(now: Date, limit = 10_000): Promise<number> {
  const keep = purgePeriod('webhook_deliveries');
  const [r] = await asService((tx) =>
    tx<{ removed: number }[]>`
    select private.webhook_purge(${now.toISOString()}::timestamptz, ${limit}, ${keep}::interval) as removed`
  );
  return r?.removed ?? 0;
}

// ---------------------------------------------------------------------------------------------
// Callers

export type WebhookJobSummary = {
  webhooks_enqueued: number;
  webhooks_delivered: number;
  webhooks_failed: number;
  webhook_endpoints_disabled: number;
  webhooks_purged: number;
};

/**
 * The job's step at its explicit `now`: the log read (up to 10 batches), due deliveries sent (at
 * most 500 attempts, 16 at a time, none started after 30 s), and deliveries past their retention
 * period (30 days) removed.
 */
export async function webhookJobStep(now: Date): Promise<WebhookJobSummary> {
  const enqueued = await enqueueFromLog({ now, maxBatches: 10 });
  const sent = await deliverDue({ now, max: 500, concurrency: 16, deadlineMs: 30_000 });
  const purged = await purgeDeliveries(now);
  return {
    webhooks_enqueued: enqueued.enqueued,
    webhooks_delivered: sent.succeeded,
    webhooks_failed: sent.failed,
    webhook_endpoints_disabled: sent.endpoints_disabled,
    webhooks_purged: purged,
  };
}

/** The run under way in this instance, and whether another was asked for while it ran. */
let running: Promise<void> | null = null;
let again = false;

/** One kick's run: the log read (2 batches at most), then due deliveries (50 at most, 8 at a time, 5 s). */
async function kickRun(): Promise<void> {
  do {
    again = false;
    try {
      await enqueueFromLog({ maxBatches: 2 });
      await deliverDue({ max: 50, concurrency: 8, deadlineMs: 5_000 });
    } catch (err) {
      log.error('background.failed', { task: 'webhooks.kick', error: errorMessage(err) });
    }
  } while (again);
}

/**
 * After a write has committed: reads the log and sends what is due, in the background of this
 * instance. At most one run at a time; a call during a run asks for one more run after it (any
 * number of such calls, one run), which picks up everything committed by then. Never rejects
 * (failures are logged; the job sends what a run left). Runs outside the caller's request and
 * Idempotency-Key: the deliveries are everyone's, not the request's. Resolves when the run that
 * covers this call has ended.
 */
export function kickWebhookDeliveries(): Promise<void> {
  if (running) {
    again = true;
    return running;
  }
  running = outsideRequest(() => outsideKeyClaim(kickRun)).finally(() => {
    running = null;
  });
  return running;
}
