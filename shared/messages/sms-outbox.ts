// SMS: every message is first a row of private.sms_outbox, written in the transaction that
// decided to send it (an OTP, an escrow transition), then dispatched after the commit. A row
// records its message (kind and params); dispatching writes the text (shared/messages/texts.ts)
// into the row's body, unless it has one already (one-time codes are written with theirs). With
// SMS_PROVIDER=termii dispatching calls Termii's send API (shared/core/sms.ts); with `outbox`
// (local work and tests) it marks the row sent and prints it.
import { outsideRequest } from '../core/request-session.ts';
import { asServiceOnce, type Tx } from '../core/db.ts';
import { errorMessage, log } from '../core/log.ts';
import { type SmsSender, smsSender } from '../core/sms.ts';
import type { SmsMessage } from './catalog.ts';
import { renderSms } from './texts.ts';

/** Tries after which a message is given up (never claimed again). */
export const SMS_MAX_ATTEMPTS = 5;

type QueuedSms = { id: number; phone: string; message: SmsMessage; body: string | null };

/**
 * Sends one claimed row, its body written from its message first when it has none (and kept in
 * the row, sent or not); a failure stays in the row (attempts, last_error) for the next try.
 */
async function sendQueued(tx: Tx, sender: SmsSender | null, row: QueuedSms): Promise<boolean> {
  let body = row.body;
  try {
    body ??= renderSms(row.message);
    if (sender) await sender.send(row.phone, body);
    // the local outbox (SMS_PROVIDER=outbox, refused in a deployment): the log shows the SMS a phone
    // would receive, code included, so that a developer can read it
    else log.info('sms.outbox', { to: row.phone, body });
    await tx`
      update private.sms_outbox set body = ${body}, sent_at = now(), attempts = attempts + 1 where id = ${row.id}`;
    return true;
  } catch (err) {
    log.warn('sms.dispatch_failed', { sms_id: row.id, error: errorMessage(err) });
    await tx`
      update private.sms_outbox set body = ${body}, attempts = attempts + 1, last_error = ${errorMessage(err)}
       where id = ${row.id}`;
    return false;
  }
}

/**
 * Sends queued rows of private.sms_outbox (sent_at null; never withheld or expired ones): the one
 * given (an OTP just committed, sent after the answer) or the oldest `limit` (the job, and after
 * transitions). Rows are claimed with SKIP LOCKED, so concurrent dispatchers never send one twice.
 * In outbox mode "sending" is marking the row delivered (and printing it).
 */
export async function dispatchQueuedSms(limit = 20, only?: number): Promise<number> {
  return (await claimAndSend(limit, only)).sent;
}

/** What dispatchQueuedSms does, with how many rows it claimed (sent or failed). */
async function claimAndSend(limit: number, only?: number): Promise<{ claimed: number; sent: number }> {
  const sender = smsSender();
  return await asServiceOnce(async (tx) => {
    const rows = await tx<QueuedSms[]>`
      select id, phone, message, body from private.sms_outbox
       where sent_at is null and withheld is null and attempts < ${SMS_MAX_ATTEMPTS} and (expires_at is null or expires_at > now())
         ${only === undefined ? tx`` : tx`and id = ${only}`}
       order by id limit ${limit} for update skip locked`;
    let sent = 0;
    for (const row of rows) if (await sendQueued(tx, sender, row)) sent++;
    return { claimed: rows.length, sent };
  });
}

/** The dispatch under way in this instance, and the one asked for after it. */
let running: Promise<void> | null = null;
let next: Promise<void> | null = null;

/**
 * One dispatch: batches of 20 until a batch claims fewer (the queue is empty, or what is left is
 * locked by another dispatcher), at most 5 batches (100 SMS); the job sends whatever is left.
 */
async function dispatchRun(): Promise<void> {
  for (let batch = 0; batch < DISPATCH_BATCHES; batch++) {
    if ((await claimAndSend(DISPATCH_BATCH)).claimed < DISPATCH_BATCH) break;
  }
}

/**
 * Sends what is queued, one dispatch per instance at a time. A call while none runs starts one; a
 * call while one runs waits for the one after it (shared by every such caller), which starts when
 * the current one ends and picks up everything queued by then. So a burst of events that each
 * queued an SMS costs one or two dispatches, not one each, and a caller waits for at most the
 * current dispatch and the next, never for a whole backlog (docs/performance.md). Runs outside
 * the caller's request scope: one request's session has nothing to do with other users' SMS.
 */
export function dispatchQueuedSmsSoon(): Promise<void> {
  if (!running) {
    running = outsideRequest(dispatchRun).finally(() => {
      running = null;
    });
    return running;
  }
  next ??= running.catch(() => {}).then(() => {
    next = null;
    return dispatchQueuedSmsSoon();
  });
  return next;
}

const DISPATCH_BATCH = 20;
const DISPATCH_BATCHES = 5;
