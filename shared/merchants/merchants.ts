// Merchant accounts and their API keys, for the merchant's owner (a user session): merchant-create,
// merchant-get, merchant-key-create, merchant-key-list, merchant-key-revoke. Each write is one SQL
// function that acts for the caller and checks that what it touches is the caller's
// (supabase/migrations/20261127190000_merchants.sql). A key is made here, answered once and
// stored only as its SHA-256 with a visible prefix; the key auth mode is key-auth.ts.
import type { AuthUser } from '../auth/session.ts';
import { type Config, getConfig } from '../core/config.ts';
import { randomBytes } from '../core/crypto.ts';
import { asService, callAsService } from '../core/db.ts';
import { merchantKeyHash } from './key-auth.ts';
import { MERCHANT_NOT_FOUND } from './refusals.ts';
import type {
  MerchantKeyCreateResponse,
  MerchantKeyListResponse,
  MerchantKeyRevokeResponse,
  MerchantResponse,
} from './schema.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random characters of a key after its esk_live_ or esk_test_ (about 238 bits). */
export const KEY_RANDOM_LENGTH = 40;

/**
 * How many live (unrevoked) keys a merchant may hold. Each key has its own rate limit, so the
 * number of keys bounds what a merchant can send a minute (MERCHANT_KEY_MAX_PER_MINUTE times this).
 */
export const MAX_MERCHANT_KEYS = 10;

/** How many random characters of a key its visible prefix shows. */
const PREFIX_RANDOM_LENGTH = 4;

/**
 * `n` uniformly random base62 characters: bytes of 248 and above are drawn again, so that every
 * character is equally likely (248 = 4 * 62).
 */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += BASE62[b % 62];
    }
  }
  return out;
}

/**
 * The start of every key of this deployment: esk_test_ where sandbox providers are allowed (the
 * local stack, or ALLOW_SANDBOX_PROVIDERS=true on a staging deployment), else esk_live_. The two
 * never meet: a key is only ever made with its deployment's start.
 */
export const keyModePrefix = (c: Pick<Config, 'local' | 'ALLOW_SANDBOX_PROVIDERS'> = getConfig()) =>
  c.local || c.ALLOW_SANDBOX_PROVIDERS === 'true' ? 'esk_test_' : 'esk_live_';

/** A new key: what the owner is shown once, and what is stored (its visible prefix and its hash). */
export async function newMerchantKey(
  c?: Pick<Config, 'local' | 'ALLOW_SANDBOX_PROVIDERS'>,
): Promise<{ key: string; prefix: string; hash: string }> {
  const start = keyModePrefix(c);
  const key = `${start}${randomBase62(KEY_RANDOM_LENGTH)}`;
  return { key, prefix: key.slice(0, start.length + PREFIX_RANDOM_LENGTH), hash: await merchantKeyHash(key) };
}

type MerchantRow = { id: string; name: string; status: MerchantResponse['status']; created_at: string };

const merchantAnswer = (m: MerchantRow): MerchantResponse => ({
  id: m.id,
  name: m.name,
  status: m.status,
  created_at: m.created_at,
});

/** merchant-create: the caller's merchant (tier 4; one per owner). */
export async function merchantCreate(user: AuthUser, body: { name: string }): Promise<MerchantResponse> {
  const [row] = await asService((tx) =>
    tx<MerchantRow[]>`select id, name, status, created_at from private.merchant_create(${user.id}, ${body.name})`
  );
  return merchantAnswer(row as MerchantRow);
}

/** merchant-get: the caller's merchant, or merchant_not_found. */
export async function merchantGet(user: AuthUser): Promise<MerchantResponse> {
  const [[row]] = await callAsService((tx) => [
    tx<MerchantRow[]>`select id, name, status, created_at from private.merchants where owner_id = ${user.id}`,
  ]);
  if (!row) throw MERCHANT_NOT_FOUND.error({});
  return merchantAnswer(row);
}

/** merchant-key-create: a new key of the caller's merchant, answered this once (at most MAX_MERCHANT_KEYS live). */
export async function merchantKeyCreate(user: AuthUser, body: { name: string }): Promise<MerchantKeyCreateResponse> {
  const made = await newMerchantKey();
  const [row] = await asService((tx) =>
    tx<{ id: string; name: string; prefix: string; created_at: string }[]>`
      select id, name, prefix, created_at
        from private.merchant_key_create(${user.id}, ${body.name}, ${made.prefix}, ${made.hash}, ${MAX_MERCHANT_KEYS})`
  );
  const k = row as { id: string; name: string; prefix: string; created_at: string };
  return { id: k.id, name: k.name, prefix: k.prefix, created_at: k.created_at, key: made.key };
}

/** merchant-key-list: the live (unrevoked) keys of the caller's merchant, newest first. */
export async function merchantKeyList(user: AuthUser): Promise<MerchantKeyListResponse> {
  const [merchant, keys] = await callAsService((tx) => [
    tx<{ id: string }[]>`select id from private.merchants where owner_id = ${user.id}`,
    tx<{ id: string; name: string; prefix: string; created_at: string; last_used_at: string | null }[]>`
        select k.id, k.name, k.prefix, k.created_at, k.last_used_at
          from private.merchant_api_keys k
         where k.merchant_id = (select m.id from private.merchants m where m.owner_id = ${user.id})
           and k.revoked_at is null
         order by k.created_at desc`,
  ]);
  if (merchant.length === 0) throw MERCHANT_NOT_FOUND.error({});
  return keys.map((k) => ({
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created_at: k.created_at,
    last_used_at: k.last_used_at,
  }));
}

/** merchant-key-revoke: the key stops authenticating from the next request on. */
export async function merchantKeyRevoke(user: AuthUser, body: { key_id: string }): Promise<MerchantKeyRevokeResponse> {
  const [row] = await asService((tx) =>
    tx<{ key_id: string; revoked_at: string }[]>`
      select key_id, revoked_at from private.merchant_key_revoke(${user.id}, ${body.key_id})`
  );
  const r = row as { key_id: string; revoked_at: string };
  return { key_id: r.key_id, revoked_at: r.revoked_at };
}
