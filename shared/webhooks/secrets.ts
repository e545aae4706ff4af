// Endpoint signing secrets (docs/webhooks.md#secrets): generated as Standard Webhooks' `whsec_`
// form, shown to the business once, and stored only encrypted under WEBHOOK_SECRET_KEY with
// AES-256-GCM (Web Crypto, the same under Deno and Node). The stored form says how it was made,
// `v1:<iv base64>:<ciphertext and tag base64>`, so a later scheme can sit beside it; each
// encryption draws a fresh 12-byte IV. GCM's tag makes a changed ciphertext or the wrong key fail
// to decrypt instead of yielding a wrong secret.
import { fromBase64, randomBytes, toBase64 } from '../core/crypto.ts';
import { readEnv } from '../core/env.ts';

const PREFIX = 'whsec_';
const STORED_VERSION = 'v1';
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${PREFIX}${toBase64(randomBytes(32))}`;
}

/** Whether a value has the shape of a secret this service issues (24 to 32 bytes after whsec_). */
export function isWebhookSecret(value: string): boolean {
  if (!value.startsWith(PREFIX)) return false;
  try {
    const n = fromBase64(value.slice(PREFIX.length)).length;
    return n >= 24 && n <= 32;
  } catch {
    return false;
  }
}

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** The AES-256-GCM key from its base64 form (32 bytes); throws SecretKeyError otherwise. */
export async function importSecretKey(base64: string): Promise<CryptoKey> {
  let raw: Uint8Array;
  try {
    raw = fromBase64(base64.trim());
  } catch {
    throw new SecretKeyError('WEBHOOK_SECRET_KEY must be base64');
  }
  if (raw.length !== 32) throw new SecretKeyError('WEBHOOK_SECRET_KEY must be the base64 of 32 bytes');
  return await crypto.subtle.importKey('raw', raw as BufferSource, 'AES-GCM', false, [
    'encrypt',
    'decrypt',
  ]);
}

/** WEBHOOK_SECRET_KEY from the environment, imported; the error names the variable, never its value. */
export async function webhookSecretKey(env: Record<string, string | undefined> = readEnv()): Promise<CryptoKey> {
  const value = env.WEBHOOK_SECRET_KEY;
  if (!value) throw new SecretKeyError('WEBHOOK_SECRET_KEY is missing');
  return await importSecretKey(value);
}

/** The stored form of a secret: `v1:<iv>:<ciphertext>`. */
export async function encryptSecret(secret: string, key: CryptoKey): Promise<string> {
  const iv = randomBytes(12);
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv: iv as BufferSource },
    key,
    enc.encode(secret),
  );
  return `${STORED_VERSION}:${toBase64(iv)}:${toBase64(new Uint8Array(sealed))}`;
}

export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptionError';
  }
}

/** The secret back from its stored form; throws SecretDecryptionError if it was altered or the key differs. */
export async function decryptSecret(stored: string, key: CryptoKey): Promise<string> {
  const parts = stored.split(':');
  if (parts.length !== 3 || parts[0] !== STORED_VERSION) {
    throw new SecretDecryptionError('not a stored secret of a known version');
  }
  let iv: Uint8Array, sealed: Uint8Array;
  try {
    iv = fromBase64(parts[1] as string);
    sealed = fromBase64(parts[2] as string);
  } catch {
    throw new SecretDecryptionError('a stored secret with a malformed part');
  }
  if (iv.length !== 12) throw new SecretDecryptionError('a stored secret with a malformed IV');
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: iv as BufferSource },
      key,
      sealed as BufferSource,
    );
    return dec.decode(plain);
  } catch {
    throw new SecretDecryptionError('the stored secret does not decrypt under this key (altered, or another key)');
  }
}
