// TOTP (RFC 6238 over HOTP, RFC 4226) as the operators' second factor: HMAC-SHA-1, 6 digits, a
// 30-second step, and a code of the step before or after the current one accepted too (one step
// of drift). Secrets are 20 random bytes, shown to the operator once as base32 in an otpauth URI,
// and stored only encrypted under TOTP_ENCRYPTION_KEY with AES-256-GCM, in the stored form of the
// webhook secrets (shared/webhooks/secrets.ts: `v1:<iv>:<ciphertext>`, a fresh IV each time).
import { getConfig } from '../core/config.ts';
import { fromBase64, randomBytes } from '../core/crypto.ts';
import { decryptSecret, encryptSecret } from '../webhooks/secrets.ts';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of the current one whose code is accepted. */
export const TOTP_DRIFT_STEPS = 1;
export const TOTP_SECRET_BYTES = 20;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (what authenticator apps read from an otpauth URI). */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The time step of a moment (milliseconds since the epoch). */
export const totpStep = (ms: number): number => Math.floor(ms / 1000 / TOTP_STEP_SECONDS);

/** HOTP (RFC 4226): the code of `counter` under `secret`, with `digits` digits and `hash`. */
export async function hotp(
  secret: Uint8Array,
  counter: number,
  digits = TOTP_DIGITS,
  hash: 'SHA-1' | 'SHA-256' | 'SHA-512' = 'SHA-1',
): Promise<string> {
  const msg = new Uint8Array(8);
  let c = counter;
  for (let i = 7; i >= 0; i--) {
    msg[i] = c & 0xff;
    c = Math.floor(c / 256);
  }
  const key = await crypto.subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, msg));
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const bin = (((mac[offset] as number) & 0x7f) << 24) | ((mac[offset + 1] as number) << 16) |
    ((mac[offset + 2] as number) << 8) | (mac[offset + 3] as number);
  return String(bin % 10 ** digits).padStart(digits, '0');
}

/** TOTP (RFC 6238): the code at a moment (milliseconds since the epoch). */
export const totp = (secret: Uint8Array, ms: number, digits = TOTP_DIGITS): Promise<string> =>
  hotp(secret, totpStep(ms), digits);

/**
 * The step among the current one and its neighbours (one step of drift) whose code is `code`, the
 * earliest first; null when none is. Every candidate is computed and compared, so the time taken
 * does not tell which matched.
 */
export async function matchingStep(secret: Uint8Array, code: string, ms: number): Promise<number | null> {
  const now = totpStep(ms);
  let found: number | null = null;
  for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
    const expected = await hotp(secret, step);
    let diff = expected.length ^ code.length;
    for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ code.charCodeAt(i);
    if (diff === 0 && found === null) found = step;
  }
  return found;
}

/** A new secret. */
export const newTotpSecret = (): Uint8Array => randomBytes(TOTP_SECRET_BYTES);

/** The otpauth URI authenticator apps read: issuer, the operator's phone as the account, SHA1/6/30. */
export function otpauthUri(secret: Uint8Array, account: string, issuer = 'Escrow'): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}

let keyOf: { value: string; key: Promise<CryptoKey> } | undefined;

/** TOTP_ENCRYPTION_KEY from the configuration, imported once per value. */
export function totpKey(): Promise<CryptoKey> {
  const value = getConfig().TOTP_ENCRYPTION_KEY;
  if (!value) return Promise.reject(new Error('TOTP_ENCRYPTION_KEY is not set'));
  if (keyOf?.value !== value) {
    const key = crypto.subtle.importKey('raw', fromBase64(value.trim()) as BufferSource, 'AES-GCM', false, [
      'encrypt',
      'decrypt',
    ]);
    keyOf = { value, key };
  }
  return keyOf.key;
}

/** The stored form of a secret (its raw bytes as base32 inside the ciphertext). */
export async function sealTotpSecret(secret: Uint8Array, key: CryptoKey): Promise<string> {
  return await encryptSecret(base32Encode(secret), key);
}

/** The secret's bytes back from its stored form; throws if it was altered or the key differs. */
export async function openTotpSecret(stored: string, key: CryptoKey): Promise<Uint8Array> {
  return base32Decode(await decryptSecret(stored, key));
}

function base32Decode(text: string): Uint8Array {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    const v = BASE32.indexOf(ch);
    if (v < 0) throw new Error('not base32');
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}
