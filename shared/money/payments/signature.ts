// Webhook signatures: HMAC-SHA512 of the raw request bytes, hex, compared in constant time.
import { hmacHex, safeEqual } from '../../core/crypto.ts';

export function signPayload(secret: string, raw: Uint8Array | string): Promise<string> {
  return hmacHex('SHA-512', secret, typeof raw === 'string' ? new TextEncoder().encode(raw) : raw);
}

export async function validSignature(secret: string, raw: Uint8Array, signature: string | null): Promise<boolean> {
  if (!signature || !/^[0-9a-fA-F]{128}$/.test(signature)) return false;
  return safeEqual(await signPayload(secret, raw), signature.toLowerCase());
}
