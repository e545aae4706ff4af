// How the KYC and identity webhooks prove where they came from (docs/kyc.md#the-webhooks).
//
// webhook-kyc (Sumsub): `x-payload-digest` is the hex HMAC of the raw body keyed with
// KYC_WEBHOOK_SECRET; `x-payload-digest-alg` names the hash (HMAC_SHA512_HEX, HMAC_SHA256_HEX or
// the legacy HMAC_SHA1_HEX). Without that header the digest is HMAC-SHA512, as our spec says (Sumsub's
// own sample code falls back to SHA-256 instead: operators should pick SHA-512 in Sumsub's dashboard
// so both agree). Any other algorithm name is refused. Hex is compared case-insensitively: Sumsub
// sends lowercase, and hex that differs only in case encodes the same bytes.
//
// webhook-identity: our own contract (shared/kyc/identity-http.ts) sends IDENTITY_WEBHOOK_SECRET
// itself in `x-identity-webhook-token`, compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { hex, safeEqual } from '../core/crypto.ts';

/** The values of `x-payload-digest-alg` we accept. */
export type KycDigestAlg = 'HMAC_SHA512_HEX' | 'HMAC_SHA256_HEX' | 'HMAC_SHA1_HEX';

const ALGORITHMS: ReadonlyMap<string, { hash: 'SHA-512' | 'SHA-256' | 'SHA-1'; hexLength: number }> = new Map([
  ['HMAC_SHA512_HEX', { hash: 'SHA-512', hexLength: 128 }],
  ['HMAC_SHA256_HEX', { hash: 'SHA-256', hexLength: 64 }],
  ['HMAC_SHA1_HEX', { hash: 'SHA-1', hexLength: 40 }],
]);

/** What a missing `x-payload-digest-alg` header means. */
export const DEFAULT_ALG: KycDigestAlg = 'HMAC_SHA512_HEX';

const enc = new TextEncoder();

// hmacHex in shared/core/crypto.ts offers SHA-256 and SHA-512 only; SHA-1 lives here, with the
// one webhook that still needs it.
async function hmac(hash: 'SHA-512' | 'SHA-256' | 'SHA-1', secret: string, data: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash }, false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', key, data as BufferSource));
}

/** The lowercase hex digest Sumsub would send for this body (the sandbox and the test fake use it). */
export function signKycPayload(
  secret: string,
  raw: Uint8Array | string,
  alg: KycDigestAlg = DEFAULT_ALG,
): Promise<string> {
  const spec = ALGORITHMS.get(alg);
  if (!spec) throw new Error(`unknown digest algorithm ${alg}`);
  return hmac(spec.hash, secret, typeof raw === 'string' ? enc.encode(raw) : raw);
}

/**
 * True when `digest` is the HMAC of `raw` under `secret` with the algorithm `alg` names (null: no
 * header, SHA-512). An unknown algorithm, or a digest that is not hex of that hash's length, is false.
 */
export async function verifyKycDigest(
  secret: string,
  raw: Uint8Array,
  digest: string | null,
  alg: string | null,
): Promise<boolean> {
  const spec = ALGORITHMS.get(alg ?? DEFAULT_ALG);
  if (!spec || !digest) return false;
  if (digest.length !== spec.hexLength || !/^[0-9a-fA-F]+$/.test(digest)) return false;
  const expected = await hmac(spec.hash, secret, raw);
  return safeEqual(expected, digest.toLowerCase());
}

/**
 * Constant-time check of webhook-identity's token. Both sides are hashed first, so the comparison
 * runs over two 32-byte digests whatever was sent, and its time says nothing about the secret's length.
 */
export function validIdentityToken(expected: string, got: string | null): boolean {
  if (!expected || !got) return false;
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(got, 'utf8').digest();
  return timingSafeEqual(a, b);
}
