// Password hashing: PBKDF2-SHA256 through Web Crypto, self-describing so the work factor can
// rise later without breaking stored hashes: pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>.
import { fromBase64, randomBytes, toBase64 } from '../core/crypto.ts';
import { timingSafeEqual } from 'node:crypto';

const enc = new TextEncoder();

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', enc.encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt: salt as BufferSource, iterations },
    key,
    256,
  );
  return new Uint8Array(bits);
}

export async function hashPassword(password: string, iterations: number): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, iterations);
  return `pbkdf2-sha256$${iterations}$${toBase64(salt)}$${toBase64(hash)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iter, saltB64, hashB64] = stored.split('$');
  const iterations = Number(iter);
  if (scheme !== 'pbkdf2-sha256' || !Number.isInteger(iterations) || !saltB64 || !hashB64) return false;
  const expected = fromBase64(hashB64);
  const actual = await derive(password, fromBase64(saltB64), iterations);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

let dummy: Promise<string> | undefined;

/** Spends the same time as a real verification, for unknown accounts (no timing oracle). */
export async function burnPasswordCheck(password: string, iterations: number): Promise<false> {
  dummy ??= hashPassword('not-a-real-password', iterations);
  await verifyPassword(password, await dummy);
  return false;
}
