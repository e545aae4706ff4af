// RFC 6238 (appendix B) test vectors for SHA-1 (the seed "12345678901234567890", 8 digits), the
// base32 of otpauth URIs, and the stored form of a secret under TOTP_ENCRYPTION_KEY.
import { describe, expect, it } from 'vitest';
import {
  base32Encode,
  matchingStep,
  openTotpSecret,
  otpauthUri,
  sealTotpSecret,
  totp,
  totpStep,
} from '../../shared/operators/totp.ts';

const SEED = new TextEncoder().encode('12345678901234567890');

describe('totp', () => {
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('RFC 6238 SHA-1 at %i s is %s', async (seconds, code) => {
    expect(await totp(SEED, seconds * 1000, 8)).toBe(code);
  });

  it('6 digits are the last 6 of the vector; one step of drift each way, not two', async () => {
    const at = 1111111111 * 1000;
    expect(await totp(SEED, at)).toBe('050471');
    const step = totpStep(at);
    expect(await matchingStep(SEED, await totp(SEED, at - 30_000), at)).toBe(step - 1);
    expect(await matchingStep(SEED, await totp(SEED, at + 30_000), at)).toBe(step + 1);
    expect(await matchingStep(SEED, await totp(SEED, at + 60_000), at)).toBeNull();
    expect(await matchingStep(SEED, await totp(SEED, at - 60_000), at)).toBeNull();
  });

  it('base32 (RFC 4648) and the otpauth URI', () => {
    expect(base32Encode(new TextEncoder().encode('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Encode(SEED)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(otpauthUri(SEED, '+2348031234567')).toBe(
      'otpauth://totp/Escrow:%2B2348031234567?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Escrow&algorithm=SHA1&digits=6&period=30',
    );
  });

  it('a sealed secret opens under its key only, and a fresh IV each time', async () => {
    const key = await crypto.subtle.importKey('raw', crypto.getRandomValues(new Uint8Array(32)), 'AES-GCM', false, [
      'encrypt',
      'decrypt',
    ]);
    const other = await crypto.subtle.importKey('raw', crypto.getRandomValues(new Uint8Array(32)), 'AES-GCM', false, [
      'encrypt',
      'decrypt',
    ]);
    const a = await sealTotpSecret(SEED, key);
    expect(a).not.toBe(await sealTotpSecret(SEED, key));
    expect([...(await openTotpSecret(a, key))]).toEqual([...SEED]);
    await expect(openTotpSecret(a, other)).rejects.toThrow();
  });
});
