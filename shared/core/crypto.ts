// Small Web Crypto helpers (same code under Deno and Node).
import { createHmac, timingSafeEqual } from 'node:crypto';

const enc = new TextEncoder();

export function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

export function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0'))
    .join('');
}

export async function sha256Hex(value: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', enc.encode(value)));
}

/**
 * HMAC in hex. node:crypto's HMAC runs on the calling thread; Web Crypto's importKey and sign are
 * each handed to a worker thread and back, which cost more than the hash on the request path
 * (webhook signatures, docs/performance.md).
 */
export async function hmacHex(hash: 'SHA-256' | 'SHA-512', key: string, message: string | Uint8Array): Promise<string> {
  return await Promise.resolve(createHmac(hash === 'SHA-256' ? 'sha256' : 'sha512', key).update(message).digest('hex'));
}

/** Constant-time equality of two strings (false at once only when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const ab = enc.encode(a);
  const bb = enc.encode(b);
  if (ab.length !== bb.length) return false;
  return timingSafeEqual(ab, bb);
}
