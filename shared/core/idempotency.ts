// Idempotency-Key (Stripe's model) for POSTs that move money or create resources: the same key
// with the same body replays the first answer; the same key with another body is 409; a key whose
// first request is still running is 409; keys live 24 hours.
//
// The key is claimed in the request's first statement (shared/core/key-claim.ts, the SQL in
// private.idempotency_claim), never in a transaction of its own:
// - An operation that calls no provider runs as one transaction: claim, operation and answer
//   commit together, so after any crash or outage the key either carries the answer or was never
//   claimed, and a retry replays or runs once. A refusal is stored too (it replays); a 429 or a 5xx
//   rolls everything back, so the same request can be retried with the key.
// - An operation that calls a provider commits its claim with its first transaction, which records
//   the pending movement under the claim's reference; the provider is called with that reference,
//   and the answer stored after. A claim left with no answer by a request that died is taken over
//   by a retry 60 s after it was made; the operation resumes from what was recorded.
import { sha256Hex } from './crypto.ts';
import { callAsService, endUnit, inline, isPgError } from './db.ts';
import { afterCommit, afterResponse } from './background.ts';
import {
  CLAIM_IN_PROGRESS,
  CLAIM_REPLAY,
  CLAIM_REUSED,
  type ClaimMode,
  type KeyClaim,
  withKeyClaim,
} from './key-claim.ts';
import { HttpError } from './http.ts';
import { JsonText } from './json-text.ts';
import { IDEMPOTENCY_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED, VALIDATION_FAILED } from './refusals.ts';

export interface StoredResponse {
  status: number;
  body: unknown;
  /** Headers of a fresh answer (Retry-After of a 429); never stored, never replayed. */
  headers?: Record<string, string>;
}

/** A secret of the answer's `data` that is never stored: derived again for a replay (endpoint.ts). */
export interface SecretShownOnce {
  field: string;
  derive(callerId: string, key: string): Promise<string>;
}

/** A 429 or a 5xx says "not now", not "this request's answer": the key is not kept for it. */
const notNow = (status: number) => status >= 500 || status === 429;

export async function withIdempotency(
  opts: {
    userId: string;
    operation: string;
    key: string;
    rawBody: Uint8Array;
    mode: ClaimMode;
    secret?: SecretShownOnce;
  },
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (opts.key.length < 1 || opts.key.length > 255 || !/^[\x21-\x7e]+$/.test(opts.key)) {
    throw VALIDATION_FAILED.error({ part: 'idempotency_key' }, {
      details: [{ field: 'Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }],
    });
  }
  const claim: KeyClaim = {
    userId: opts.userId,
    operation: opts.operation,
    key: opts.key,
    hash: await sha256Hex(`${opts.operation}\n${new TextDecoder().decode(opts.rawBody)}`),
    mode: opts.mode,
    state: 'unclaimed',
    deferred: [],
  };
  let result: StoredResponse;
  try {
    result = await withKeyClaim(claim, run);
  } catch (err) {
    if (claim.mode === 'atomic') await endUnit(claim, null).catch(() => {});
    const refused = claimRefusal(err);
    if (refused) return await withSecret(refused, opts);
    // A provider claim already committed: a deliberate "not now" (the provider unavailable with
    // nothing sent, a 429) frees the key; anything else (the database out of reach, a failure
    // after the provider may have acted) keeps it, for a retry to resume once its lease is over.
    if (claim.state === 'claimed' && err instanceof HttpError && notNow(err.status)) {
      await storeProviderAnswer(claim, null);
    }
    throw err;
  }
  const stored = notNow(result.status)
    ? null
    : { status: result.status, body: JSON.stringify(withoutSecret(result.body, opts.secret)) };
  if (claim.mode === 'atomic') {
    try {
      await endUnit(claim, stored);
    } catch (err) {
      // the COMMIT failed, or its answer was lost: the deferred work is not run (the job picks up
      // the payouts and SMS a committed unit left queued)
      const refused = claimRefusal(err);
      if (refused) return await withSecret(refused, opts);
      throw err;
    }
    await runDeferred(claim);
  } else if (claim.state === 'claimed') {
    await storeProviderAnswer(claim, stored);
  }
  return { ...result, replayed: false };
}

/** A provider claim's answer, stored once the provider has answered; null frees the key. */
async function storeProviderAnswer(claim: KeyClaim, stored: { status: number; body: string } | null): Promise<void> {
  await callAsService((tx) => [
    inline(tx)`select private.idempotency_answer(${claim.userId}, ${claim.operation}, ${claim.key}, ${
      stored?.status ?? null
    }, ${stored?.body ?? null})`,
  ]);
}

/** The success envelope's data with the secret left out (null), as it is stored. */
function withoutSecret(answer: unknown, secret: SecretShownOnce | undefined): unknown {
  // an answer Postgres wrote as text is read as a value here, so its secret is left out too
  const body = answer instanceof JsonText ? answer.toJSON() : answer;
  const data = (body as { data?: Record<string, unknown> } | null)?.data;
  if (!secret || !data || typeof data[secret.field] !== 'string') return body;
  return { ...(body as object), data: { ...data, [secret.field]: null } };
}

/** A replayed success with its secret derived again, where it was left out of the stored answer. */
async function withSecret(
  r: StoredResponse & { replayed: boolean },
  opts: { userId: string; key: string; secret?: SecretShownOnce },
): Promise<StoredResponse & { replayed: boolean }> {
  const data = (r.body as { data?: Record<string, unknown> } | null)?.data;
  if (!opts.secret || !data || data[opts.secret.field] !== null) return r;
  return {
    ...r,
    body: {
      ...(r.body as object),
      data: { ...data, [opts.secret.field]: await opts.secret.derive(opts.userId, opts.key) },
    },
  };
}

/** What the claim found instead of a fresh key: a replay, or a 409. Null for any other error. */
function claimRefusal(err: unknown): (StoredResponse & { replayed: boolean }) | null {
  if (isPgError(err, CLAIM_REPLAY)) {
    const stored = JSON.parse((err as { detail: string }).detail) as { status: number; body: string };
    return { status: stored.status, body: JSON.parse(stored.body), replayed: true };
  }
  if (isPgError(err, CLAIM_REUSED)) {
    throw IDEMPOTENCY_KEY_REUSED.error({}, {
      details: [{
        field: 'Idempotency-Key',
        message: 'was used with a different body; use a new key for a new request',
      }],
    });
  }
  if (isPgError(err, CLAIM_IN_PROGRESS)) throw IDEMPOTENCY_IN_PROGRESS.error({});
  return null;
}

/** The work that waited for the unit's commit (payouts to hand over, SMS to send), in order. */
async function runDeferred(claim: KeyClaim): Promise<void> {
  for (const d of claim.deferred.splice(0)) {
    if (d.afterResponse) afterResponse(d.task, d.work);
    else await afterCommit(d.task, d.work);
  }
}
