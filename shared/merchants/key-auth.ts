// The merchant key auth mode: a merchant's servers call its operations with one of its API keys as
// `Authorization: Bearer esk_live_...` (esk_test_... where sandbox providers are allowed). Every
// request looks the key up again by its SHA-256 (nothing is cached: a revoked key is refused on
// the next request), takes a unit of the key's rate limit (MERCHANT_KEY_MAX_PER_MINUTE; over it a
// 429 with Retry-After) and records when the key was last used, at most once a minute; all in one
// statement (private.merchant_key_authenticate). The caller's id is the merchant's, so the
// Idempotency-Keys of key requests are kept per merchant, whichever of its keys sent them.
import { getConfig } from '../core/config.ts';
import { sha256Hex } from '../core/crypto.ts';
import { asService } from '../core/db.ts';
import { type AuthMode, type Caller, sqlRefusal } from '../core/endpoint.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { RATE_LIMITED, UNAUTHENTICATED } from '../core/refusals.ts';
import { ACCOUNT_FROZEN } from '../freezes/refusals.ts';
import { MERCHANT_KEY_PATTERN } from './schema.ts';

/** The caller of a key-authenticated endpoint: the key's merchant. */
export interface MerchantCaller extends Caller {
  /** The merchant's id (Idempotency-Keys are kept under it). */
  id: string;
  merchantId: string;
  /** The key that authenticated this request. */
  keyId: string;
  /** The user who owns the merchant (their limits apply to its money). */
  ownerId: string;
}

/** What the key's lookup refuses with in SQL. */
const KEY_REFUSALS = { name: 'merchant_key', refusals: new Map([[ACCOUNT_FROZEN.code, ACCOUNT_FROZEN]]) };

/** The hash a key is stored and looked up by: the SHA-256 of the whole key, hex. */
export const merchantKeyHash = (key: string): Promise<string> => sha256Hex(key);

/**
 * The merchant of the request's key, or a refusal: 401 without a key of the right form, for a key
 * that is unknown, revoked or whose merchant is not active; 403 account_frozen when the merchant's
 * owner is frozen (private.merchant_key_authenticate); 429 with Retry-After over the key's
 * rate limit. `maxPerMinute` is the configured limit unless given (the tests give a small one).
 */
export async function merchantKeyCaller(
  req: Request,
  maxPerMinute = getConfig().MERCHANT_KEY_MAX_PER_MINUTE,
): Promise<MerchantCaller> {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '');
  if (!match) throw UNAUTHENTICATED.error({ reason: 'missing' });
  const key = match[1] as string;
  // a session's token or anything else that is not a key: no database round trip
  if (!MERCHANT_KEY_PATTERN.test(key)) throw UNAUTHENTICATED.error({ reason: 'key' });
  const hash = await merchantKeyHash(key);
  const [row] = await asService((tx) =>
    tx<{ merchant_id: string; key_id: string; owner_id: string; wait: number }[]>`
      select merchant_id, key_id, owner_id, wait from private.merchant_key_authenticate(${hash}, ${maxPerMinute})`
  ).catch((err) => {
    // the owner's freeze (account_frozen), raised in SQL: worded here, before any endpoint runs
    throw sqlRefusal(KEY_REFUSALS, err) ?? err;
  });
  if (!row) throw UNAUTHENTICATED.error({ reason: 'key' });
  const wait = Number(row.wait);
  if (wait > 0) {
    throw RATE_LIMITED.error(
      { message: `Too many requests with this API key, try again in ${describeWait(wait)}` },
      { headers: retryAfterHeader(wait) },
    );
  }
  return { id: row.merchant_id, merchantId: row.merchant_id, keyId: row.key_id, ownerId: row.owner_id };
}

/** An auth mode of merchant keys with its own rate limit (the tests' toy endpoints). */
export function merchantKeyMode(opts: { maxPerMinute?: number } = {}): AuthMode<MerchantCaller> {
  return {
    name: 'merchant_key',
    hidden: false,
    scheme: {
      name: 'merchantKey',
      definition: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'esk_live_... or esk_test_...',
        description: "A merchant's API key (merchant-key-create), as `Authorization: Bearer esk_live_...` " +
          '(`esk_test_...` on a deployment with sandbox providers). Rate-limited per key.',
      },
    },
    refusals: [ACCOUNT_FROZEN, RATE_LIMITED],
    identify: (req) => merchantKeyCaller(req, opts.maxPerMinute),
  };
}

/** auth 'merchant_key': the endpoints a merchant's servers call with an API key. */
export const merchantKey: AuthMode<MerchantCaller> = merchantKeyMode();
