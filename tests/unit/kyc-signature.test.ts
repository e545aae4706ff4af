// webhook-kyc's digest check (Sumsub's x-payload-digest / x-payload-digest-alg) and
// webhook-identity's token check. Expected digests are computed here with node:crypto, apart from
// the code under test.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signKycPayload, validIdentityToken, verifyKycDigest } from '../../shared/kyc/signature.ts';

const secret = 'unit-test-kyc-webhook-secret';
const body = JSON.stringify({
  applicantId: '65f0c0ffee0000000000a001',
  externalUserId: '8a3c4f7e-1d2b-4e5f-9a0b-123456789abc',
  levelName: 'tier-1',
  type: 'applicantReviewed',
  reviewResult: { reviewAnswer: 'GREEN' },
  reviewStatus: 'completed',
  createdAtMs: '2025-03-01 10:15:30.123',
  note: 'naïve ₦ bytes', // non-ASCII: the digest covers the bytes
});
const raw = new TextEncoder().encode(body);
const digest = (hash: 'sha512' | 'sha256' | 'sha1', key = secret, data: Uint8Array = raw) =>
  createHmac(hash, key).update(data).digest('hex');

const ALGS = [
  ['HMAC_SHA512_HEX', 'sha512', 128],
  ['HMAC_SHA256_HEX', 'sha256', 64],
  ['HMAC_SHA1_HEX', 'sha1', 40],
] as const;

describe('verifyKycDigest', () => {
  it.each(ALGS)('%s: its digest is accepted with its header', async (alg, hash, length) => {
    const d = digest(hash);
    expect(d).toHaveLength(length);
    expect(await verifyKycDigest(secret, raw, d, alg)).toBe(true);
  });

  it('without the alg header the digest is HMAC-SHA512', async () => {
    expect(await verifyKycDigest(secret, raw, digest('sha512'), null)).toBe(true);
  });

  it('a SHA-256 or SHA-1 digest without the header is refused', async () => {
    expect(await verifyKycDigest(secret, raw, digest('sha256'), null)).toBe(false);
    expect(await verifyKycDigest(secret, raw, digest('sha1'), null)).toBe(false);
  });

  it("a digest under another header's algorithm is refused", async () => {
    expect(await verifyKycDigest(secret, raw, digest('sha256'), 'HMAC_SHA512_HEX')).toBe(false);
    expect(await verifyKycDigest(secret, raw, digest('sha512'), 'HMAC_SHA256_HEX')).toBe(false);
    expect(await verifyKycDigest(secret, raw, digest('sha256'), 'HMAC_SHA1_HEX')).toBe(false);
  });

  it.each(['HMAC_SHA384_HEX', 'hmac_sha512_hex', 'SHA512', '', ' HMAC_SHA512_HEX', 'constructor', '__proto__'])(
    'an unknown algorithm %j is refused, even with a right SHA-512 digest',
    async (alg) => {
      expect(await verifyKycDigest(secret, raw, digest('sha512'), alg)).toBe(false);
    },
  );

  it('a changed body is refused', async () => {
    const tampered = new TextEncoder().encode(body.replace('GREEN', 'RED'));
    for (const [alg, hash] of ALGS) expect(await verifyKycDigest(secret, tampered, digest(hash), alg)).toBe(false);
    const extraSpace = new TextEncoder().encode(`${body} `);
    expect(await verifyKycDigest(secret, extraSpace, digest('sha512'), null)).toBe(false);
  });

  it('another secret is refused', async () => {
    expect(await verifyKycDigest(secret, raw, digest('sha512', 'another-secret'), null)).toBe(false);
  });

  it('uppercase hex is accepted: it is the same bytes (Sumsub sends lowercase)', async () => {
    for (const [alg, hash] of ALGS) {
      expect(await verifyKycDigest(secret, raw, digest(hash).toUpperCase(), alg)).toBe(true);
    }
  });

  it('a digest of the wrong length, or not hex, or missing, is refused', async () => {
    const d = digest('sha512');
    for (
      const bad of [
        d.slice(0, -1),
        `${d}0`,
        d.slice(0, 64),
        `${d.slice(0, -1)}g`,
        ` ${d.slice(1)}`,
        `sha512=${d}`,
        '',
        null,
      ]
    ) {
      expect(await verifyKycDigest(secret, raw, bad, null)).toBe(false);
    }
  });

  it('signKycPayload gives what verifyKycDigest accepts (SHA-512 by default)', async () => {
    expect(await signKycPayload(secret, body)).toBe(digest('sha512'));
    for (const [alg, hash] of ALGS) {
      const d = await signKycPayload(secret, raw, alg);
      expect(d).toBe(digest(hash));
      expect(await verifyKycDigest(secret, raw, d, alg)).toBe(true);
    }
  });
});

describe('validIdentityToken', () => {
  const expected = 'unit-test-identity-webhook-secret';

  it('accepts the secret itself', () => {
    expect(validIdentityToken(expected, expected)).toBe(true);
  });

  it('refuses anything else: another value, a prefix, a longer value, another case', () => {
    expect(validIdentityToken(expected, 'unit-test-identity-webhook-secreT')).toBe(false);
    expect(validIdentityToken(expected, expected.slice(0, -1))).toBe(false);
    expect(validIdentityToken(expected, `${expected}x`)).toBe(false);
    expect(validIdentityToken(expected, expected.toUpperCase())).toBe(false);
    expect(validIdentityToken(expected, ` ${expected}`)).toBe(false);
  });

  it('refuses a missing or empty token, and never matches an empty secret', () => {
    expect(validIdentityToken(expected, null)).toBe(false);
    expect(validIdentityToken(expected, '')).toBe(false);
    expect(validIdentityToken('', '')).toBe(false);
  });
});
