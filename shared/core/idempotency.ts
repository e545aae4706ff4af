// Idempotency-Key (Stripe's model) for POSTs that move money or create resources: the same key
// with the same body replays the first answer; the same key with another body is 409; a key whose
// first request is still running is 409; keys live 24 hours. A request that failed with a 5xx or
// was rate limited (429) leaves no record, so it can be retried with the same key, and so does one
// that died without answering (after ABANDONED_AFTER_SECONDS). One exception: when the database
// went out of reach, the outcome is unknown, and the key stays claimed until then.
import { sha256Hex } from './crypto.ts';
import { asService, isDatabaseUnavailable } from './db.ts';
import { IDEMPOTENCY_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED, VALIDATION_FAILED } from './refusals.ts';

const IDEMPOTENCY_TTL_HOURS = 24;
/** A claimed key with no answer after this long belongs to a request that died. */
const ABANDONED_AFTER_SECONDS = 300;

export interface StoredResponse {
  status: number;
  body: unknown;
  /** Headers of a fresh answer (Retry-After of a 429); never stored, never replayed. */
  headers?: Record<string, string>;
}

export async function withIdempotency(
  opts: { userId: string; operation: string; key: string; rawBody: Uint8Array },
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (opts.key.length < 1 || opts.key.length > 255 || !/^[\x21-\x7e]+$/.test(opts.key)) {
    throw VALIDATION_FAILED.error({ part: 'idempotency_key' }, {
      details: [{ field: 'Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }],
    });
  }
  const hash = await sha256Hex(`${opts.operation}\n${new TextDecoder().decode(opts.rawBody)}`);
  const claimed = await asService(async (tx) => {
    // Expired keys are forgotten; so is a claim whose request died before answering (a crash):
    // no request runs for minutes, and the money operations under it are idempotent themselves.
    await tx`delete from private.idempotency_keys
             where user_id = ${opts.userId} and operation = ${opts.operation} and key = ${opts.key}
               and (created_at < now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})
                    or (response_status is null and created_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS})))`;
    const inserted = await tx`
      insert into private.idempotency_keys (user_id, operation, key, request_hash)
      values (${opts.userId}, ${opts.operation}, ${opts.key}, ${hash})
      on conflict do nothing returning key`;
    if (inserted.length > 0) return null;
    const [row] = await tx<{ request_hash: string; response_status: number | null; response_body: string | null }[]>`
      select request_hash, response_status, response_body from private.idempotency_keys
       where user_id = ${opts.userId} and operation = ${opts.operation} and key = ${opts.key}`;
    return row ?? null;
  });

  if (claimed) {
    if (claimed.request_hash !== hash) {
      throw IDEMPOTENCY_KEY_REUSED.error({}, {
        details: [{
          field: 'Idempotency-Key',
          message: 'was used with a different body; use a new key for a new request',
        }],
      });
    }
    if (claimed.response_status === null) {
      throw IDEMPOTENCY_IN_PROGRESS.error({});
    }
    return { status: claimed.response_status, body: JSON.parse(claimed.response_body ?? 'null'), replayed: true };
  }

  let result: StoredResponse;
  try {
    result = await run();
  } catch (err) {
    // With the database out of reach the operation may have committed before the connection went:
    // the key stays claimed (a retry hears "still being processed") rather than freed for a second
    // run. It is freed like any abandoned claim, after ABANDONED_AFTER_SECONDS.
    if (!isDatabaseUnavailable(err)) {
      await asService((tx) =>
        tx`delete from private.idempotency_keys
        where user_id = ${opts.userId} and operation = ${opts.operation} and key = ${opts.key}`
      );
    }
    throw err;
  }
  // A 5xx or a 429 says "not now", not "this request's answer": the key is freed so the same
  // request can be retried with it once the fault or the limit has passed.
  if (result.status >= 500 || result.status === 429) {
    await asService((tx) =>
      tx`delete from private.idempotency_keys
      where user_id = ${opts.userId} and operation = ${opts.operation} and key = ${opts.key}`
    );
  } else {
    await asService((tx) =>
      tx`update private.idempotency_keys
      set response_status = ${result.status}, response_body = ${JSON.stringify(result.body)}
      where user_id = ${opts.userId} and operation = ${opts.operation} and key = ${opts.key}`
    );
  }
  return { ...result, replayed: false };
}
