// The KYC-side adapters called directly (under Node), not through the server: the Sumsub adapter
// and the http identity adapter against the stack's KYC fake (tests/fakes/kyc.ts), which checks
// Sumsub's request signature itself; a few answers the fake never gives against a local stub; and
// the two sandboxes, whose webhooks a local receiver catches and checks.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { httpIdentityProvider } from '../../shared/kyc/identity-http.ts';
import { ProviderError } from '../../shared/kyc/provider.ts';
import { sandboxIdentityProvider, sandboxKycProvider } from '../../shared/kyc/sandbox.ts';
import { validIdentityToken, verifyKycDigest } from '../../shared/kyc/signature.ts';
import { isFinalRejection, SumsubError, sumsubProvider } from '../../shared/kyc/sumsub.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { TEST_IDENTITY_API_KEY, TEST_SUMSUB_APP_TOKEN, TEST_SUMSUB_SECRET_KEY } from '../support/stack.ts';

/** A Sumsub webhook body as the sandbox sends it (the fields these tests read). */
type SumsubEvent = { applicantId: string; correlationId: string; createdAtMs: string } & Record<string, unknown>;

const TOKEN_PATH = '/resources/accessTokens/sdk';
/** The account holder a NIN or BVN request carries. */
const HOLDER = { firstName: 'Chidi', lastName: 'Okafor', phone: '+2348031234567' };
const VERIFY_PATH = '/identity/verifications';
const fakeUrl = () => inject('fakeKycUrl');

const sumsub = (opts: { secretKey?: string; appToken?: string; timeoutMs?: number } = {}) =>
  sumsubProvider({
    baseUrl: fakeUrl(),
    appToken: opts.appToken ?? TEST_SUMSUB_APP_TOKEN,
    secretKey: opts.secretKey ?? TEST_SUMSUB_SECRET_KEY,
    timeoutMs: opts.timeoutMs,
  });
const identity = (opts: { apiKey?: string; timeoutMs?: number } = {}) =>
  httpIdentityProvider({
    baseUrl: `${fakeUrl()}/identity`,
    apiKey: opts.apiKey ?? TEST_IDENTITY_API_KEY,
    timeoutMs: opts.timeoutMs,
  });

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected the call to fail');
}

/** Runs `body` with a failure rule for calls whose `field` is `value`, removed afterwards. */
async function withFailure<T>(
  rule: { path: string; mode: 'refuse' | 'unavailable' | 'timeout'; field: string; value: string },
  body: () => Promise<T>,
): Promise<T> {
  await kycFake.fail(rule);
  try {
    return await body();
  } finally {
    await kycFake.clearFail({ path: rule.path, field: rule.field, value: rule.value });
  }
}

const eleven = () => String(Math.floor(Math.random() * 1e11)).padStart(11, '1');

describe('Sumsub adapter against the fake', () => {
  it('gets an SDK token with a request the fake finds correctly signed', async () => {
    const userId = randomUUID();
    const before = Math.floor(Date.now() / 1000);
    const { token } = await sumsub().accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 });
    expect(token).toMatch(/^_act-sbx-[0-9a-f-]{36}$/);
    const seen = (await kycFake.requests(TOKEN_PATH)).filter((r) => r.body?.userId === userId);
    expect(seen).toHaveLength(1);
    const r = seen[0]!;
    expect(r.method).toBe('POST');
    expect(r.body).toEqual({ userId, levelName: 'tier-1', ttlInSecs: 600 });
    expect(r.sumsub?.appToken).toBe(TEST_SUMSUB_APP_TOKEN);
    expect(r.sumsub?.signatureValid).toBe(true);
    expect(r.sumsub?.signature).toMatch(/^[0-9a-f]{64}$/); // lowercase hex HMAC-SHA256
    expect(Number(r.sumsub?.ts)).toBeGreaterThanOrEqual(before);
    expect(Number(r.sumsub?.ts)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('a wrong secret key is refused: the fake recomputes the signature (401, error 4003)', async () => {
    const userId = randomUUID();
    const err = await rejection(
      sumsub({ secretKey: 'not-the-secret-key' }).accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 }),
    );
    expect(err.kind).toBe('refused');
    expect(err.httpStatus).toBe(401);
    expect((err as SumsubError).errorCode).toBe(4003);
    expect(err.message).toContain('Invalid signature');
    expect(err.message).not.toContain('not-the-secret-key');
    const [r] = (await kycFake.requests(TOKEN_PATH)).filter((x) => x.body?.userId === userId);
    expect(r?.sumsub?.signatureValid).toBe(false);
  });

  it('a wrong app token is refused (401, error 4001)', async () => {
    const err = await rejection(
      sumsub({ appToken: 'sbx:someone-else' }).accessToken({
        userId: randomUUID(),
        levelName: 'tier-1',
        ttlSeconds: 60,
      }),
    );
    expect([err.kind, err.httpStatus, (err as SumsubError).errorCode]).toEqual(['refused', 401, 4001]);
  });

  it('a request whose timestamp is over 60 s old is refused (401, error 4004)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() - 120_000);
      const err = await rejection(sumsub().accessToken({ userId: randomUUID(), levelName: 'tier-1', ttlSeconds: 60 }));
      expect([err.kind, err.httpStatus, (err as SumsubError).errorCode]).toEqual(['refused', 401, 4004]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an applicant with a FINAL rejection at that level: 409 / 1009, refused and recognised as final', async () => {
    const userId = randomUUID();
    await kycFake.sumsubFinal(userId, 'tier-2');
    const err = await rejection(sumsub().accessToken({ userId, levelName: 'tier-2', ttlSeconds: 600 }));
    expect(err.kind).toBe('refused');
    expect(err.httpStatus).toBe(409);
    expect(isFinalRejection(err)).toBe(true);
    // the other level of the same user is not affected
    await expect(sumsub().accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 })).resolves.toHaveProperty(
      'token',
    );
    await kycFake.sumsubFinal(userId, 'tier-2', false);
    await expect(sumsub().accessToken({ userId, levelName: 'tier-2', ttlSeconds: 600 })).resolves.toHaveProperty(
      'token',
    );
  });

  it('a 4xx from Sumsub is refused, not final', async () => {
    const userId = randomUUID();
    const err = await withFailure(
      { path: TOKEN_PATH, mode: 'refuse', field: 'userId', value: userId },
      () => rejection(sumsub().accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 })),
    );
    expect([err.kind, err.httpStatus]).toEqual(['refused', 400]);
    expect(isFinalRejection(err)).toBe(false);
  });

  it('a 500 is unavailable', async () => {
    const userId = randomUUID();
    const err = await withFailure(
      { path: TOKEN_PATH, mode: 'unavailable', field: 'userId', value: userId },
      () => rejection(sumsub().accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 })),
    );
    expect([err.kind, err.httpStatus]).toEqual(['unavailable', 500]);
  });

  it('no answer within the timeout is unavailable', async () => {
    const userId = randomUUID();
    const started = Date.now();
    const err = await withFailure(
      { path: TOKEN_PATH, mode: 'timeout', field: 'userId', value: userId },
      () => rejection(sumsub({ timeoutMs: 300 }).accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 })),
    );
    expect(err.kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('http identity adapter against the fake', () => {
  it('an accepted request resolves; the fake received our contract with the bearer key and the holder', async () => {
    const reference = `idv_${randomUUID()}`;
    const idNumber = eleven();
    await identity().requestCheck({ reference, verificationType: 'NIN', idNumber, holder: HOLDER });
    const seen = (await kycFake.requests(VERIFY_PATH)).filter((r) => r.body?.reference === reference);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).toEqual({
      reference,
      verificationType: 'NIN',
      idNumber,
      firstName: 'Chidi',
      lastName: 'Okafor',
      phone: '+2348031234567',
    });
    expect(seen[0]?.identity).toEqual({ authorized: true, idLast4: idNumber.slice(-4) });
  });

  it('sends bankCode for BANK_ACCOUNT and rcNumber for DIRECTOR', async () => {
    const bank = `idv_${randomUUID()}`;
    const director = `idv_${randomUUID()}`;
    await identity().requestCheck({
      reference: bank,
      verificationType: 'BANK_ACCOUNT',
      idNumber: '0123456789',
      bankCode: '058',
    });
    await identity().requestCheck({
      reference: director,
      verificationType: 'DIRECTOR',
      idNumber: eleven(),
      rcNumber: 'RC1234567',
    });
    const seen = await kycFake.requests(VERIFY_PATH);
    expect(seen.find((r) => r.body?.reference === bank)?.body).toMatchObject({ bankCode: '058' });
    expect(seen.find((r) => r.body?.reference === director)?.body).toMatchObject({ rcNumber: 'RC1234567' });
  });

  it('a wrong key is refused (401)', async () => {
    const err = await rejection(
      identity({ apiKey: 'wrong-key' }).requestCheck({
        reference: `idv_${randomUUID()}`,
        verificationType: 'BVN',
        idNumber: eleven(),
        holder: HOLDER,
      }),
    );
    expect([err.kind, err.httpStatus]).toEqual(['refused', 401]);
    expect(err.message).toContain('Invalid API key');
  });

  it('a NIN or BVN without the holder is malformed to the contract (400)', async () => {
    const err = await rejection(
      identity().requestCheck({ reference: `idv_${randomUUID()}`, verificationType: 'NIN', idNumber: eleven() }),
    );
    expect([err.kind, err.httpStatus]).toEqual(['refused', 400]);
    expect(err.message).toContain('firstName, lastName and phone are required');
  });

  it('a request the provider finds malformed is refused with its message (400)', async () => {
    const err = await rejection(
      identity().requestCheck({
        reference: `idv_${randomUUID()}`,
        verificationType: 'BANK_ACCOUNT',
        idNumber: '0123456789',
      }),
    );
    expect([err.kind, err.httpStatus]).toEqual(['refused', 400]);
    expect(err.message).toContain('bankCode is required');
  });

  it('a 500 is unavailable', async () => {
    const reference = `idv_${randomUUID()}`;
    const err = await withFailure(
      { path: VERIFY_PATH, mode: 'unavailable', field: 'reference', value: reference },
      () =>
        rejection(identity().requestCheck({ reference, verificationType: 'NIN', idNumber: eleven(), holder: HOLDER })),
    );
    expect([err.kind, err.httpStatus]).toEqual(['unavailable', 500]);
  });

  it('no answer within the timeout is unavailable', async () => {
    const reference = `idv_${randomUUID()}`;
    const err = await withFailure(
      { path: VERIFY_PATH, mode: 'timeout', field: 'reference', value: reference },
      () =>
        rejection(
          identity({ timeoutMs: 300 }).requestCheck({ reference, verificationType: 'TIN', idNumber: '12345678-0001' }),
        ),
    );
    expect(err.kind).toBe('unavailable');
  });
});

// --- a local stub for answers the fake never gives, and a receiver for the sandboxes' webhooks ---

interface Caught {
  path: string;
  headers: IncomingMessage['headers'];
  raw: Buffer;
}
let server: Server;
let local = '';
const caught: Caught[] = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      caught.push({ path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks) });
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  local = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const reply = (status: number, body: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(body);
};

async function caughtAt(path: string, count: number): Promise<Caught[]> {
  for (let i = 0; i < 100; i++) {
    const found = caught.filter((c) => c.path === path);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  return caught.filter((c) => c.path === path);
}

describe('adapters and answers the fake does not give', () => {
  const stubSumsub = () => sumsubProvider({ baseUrl: local, appToken: 'sbx:x', secretKey: 'k' });

  it('Sumsub: 200 without a token, or not JSON, is unavailable', async () => {
    answer = reply(200, JSON.stringify({ userId: 'u' }));
    expect((await rejection(stubSumsub().accessToken({ userId: 'u', levelName: 'l', ttlSeconds: 60 }))).kind).toBe(
      'unavailable',
    );
    answer = reply(200, JSON.stringify({ token: '' }));
    expect((await rejection(stubSumsub().accessToken({ userId: 'u', levelName: 'l', ttlSeconds: 60 }))).kind).toBe(
      'unavailable',
    );
    answer = reply(200, '<html>ok</html>');
    expect((await rejection(stubSumsub().accessToken({ userId: 'u', levelName: 'l', ttlSeconds: 60 }))).kind).toBe(
      'unavailable',
    );
  });

  it("Sumsub: a 4xx without Sumsub's error body is still refused; 429 (rate limited) is unavailable", async () => {
    answer = reply(403, 'Forbidden');
    const err = await rejection(stubSumsub().accessToken({ userId: 'u', levelName: 'l', ttlSeconds: 60 }));
    expect([err.kind, err.httpStatus]).toEqual(['refused', 403]);
    answer = reply(429, JSON.stringify({ description: 'Too many requests', code: 429, correlationId: 'req-1' }));
    const limited = await rejection(stubSumsub().accessToken({ userId: 'u', levelName: 'l', ttlSeconds: 60 }));
    expect([limited.kind, limited.httpStatus]).toEqual(['unavailable', 429]);
    answer = reply(429, JSON.stringify({ message: 'slow down' }));
    const idLimited = await rejection(
      httpIdentityProvider({ baseUrl: local, apiKey: 'k' }).requestCheck({
        reference: 'r',
        verificationType: 'NIN',
        idNumber: '1',
      }),
    );
    expect([idLimited.kind, idLimited.httpStatus]).toEqual(['unavailable', 429]);
  });

  it('nobody listening is unavailable', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const addr = closed.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    await new Promise<void>((r) => closed.close(() => r()));
    const s = sumsubProvider({ baseUrl: `http://127.0.0.1:${port}`, appToken: 'sbx:x', secretKey: 'k' });
    expect((await rejection(s.accessToken({ userId: 'u', levelName: 'l', ttlSeconds: 60 }))).kind).toBe('unavailable');
    const i = httpIdentityProvider({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k' });
    expect((await rejection(i.requestCheck({ reference: 'r', verificationType: 'NIN', idNumber: '1' }))).kind).toBe(
      'unavailable',
    );
  });

  it('identity: a refusal that echoes the id number does not carry it on', async () => {
    const idNumber = '22233344455';
    answer = reply(422, JSON.stringify({ message: `No record for ${idNumber}` }));
    const err = await rejection(
      httpIdentityProvider({ baseUrl: local, apiKey: 'k' }).requestCheck({
        reference: 'r',
        verificationType: 'BVN',
        idNumber,
      }),
    );
    expect([err.kind, err.httpStatus]).toEqual(['refused', 422]);
    expect(err.message).toContain('No record for');
    expect(err.message).not.toContain(idNumber);
    answer = reply(400, JSON.stringify({ error: 'bad request' }));
    const err2 = await rejection(
      httpIdentityProvider({ baseUrl: local, apiKey: 'k' }).requestCheck({
        reference: 'r',
        verificationType: 'BVN',
        idNumber,
      }),
    );
    expect(err2.message).toContain('bad request');
  });
});

describe('sandboxes', () => {
  const secret = 'sandbox-test-kyc-secret';
  const token = 'sandbox-test-identity-token';

  it('KYC: a token at once, then applicantPending and applicantReviewed GREEN, signed with SHA-512', async () => {
    answer = reply(200, '{"received":true}');
    const path = `/kyc-${randomUUID()}`;
    const kyc = sandboxKycProvider({ webhookUrl: `${local}${path}`, secret, delayMs: 10 });
    const userId = randomUUID();
    const { token: t } = await kyc.accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 });
    expect(t).toMatch(/^_act-sandbox-[0-9a-f-]{36}$/);
    const events = await caughtAt(path, 2);
    expect(events).toHaveLength(2);
    const bodies = events.map((e) => JSON.parse(e.raw.toString('utf8')) as SumsubEvent);
    for (const e of events) {
      expect(e.headers['x-payload-digest-alg']).toBe('HMAC_SHA512_HEX');
      const digest = e.headers['x-payload-digest'] as string;
      expect(await verifyKycDigest(secret, new Uint8Array(e.raw), digest, 'HMAC_SHA512_HEX')).toBe(true);
    }
    const [pending, reviewed] = bodies as [SumsubEvent, SumsubEvent];
    expect(pending).toMatchObject({
      type: 'applicantPending',
      reviewStatus: 'pending',
      externalUserId: userId,
      levelName: 'tier-1',
      sandboxMode: true,
      applicantType: 'individual',
    });
    expect(reviewed).toMatchObject({
      type: 'applicantReviewed',
      reviewStatus: 'completed',
      reviewResult: { reviewAnswer: 'GREEN' },
      externalUserId: userId,
      levelName: 'tier-1',
    });
    expect(reviewed.applicantId).toBe(pending.applicantId);
    expect(reviewed.correlationId).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(reviewed.createdAtMs).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    expect(reviewed.createdAtMs > pending.createdAtMs).toBe(true);

    // the same user and level is the same applicant
    await kyc.accessToken({ userId, levelName: 'tier-1', ttlSeconds: 600 });
    const again = await caughtAt(path, 4);
    expect(JSON.parse(again[3]!.raw.toString('utf8')).applicantId).toBe(reviewed.applicantId);
  });

  it('identity: found, or not_found when the number ends in 0, with the token header', async () => {
    answer = reply(200, '{"received":true}');
    const path = `/identity-${randomUUID()}`;
    const id = sandboxIdentityProvider({ webhookUrl: `${local}${path}`, token, delayMs: 10 });
    await id.requestCheck({ reference: 'ref-found', verificationType: 'NIN', idNumber: '12345678901', holder: HOLDER });
    await id.requestCheck({ reference: 'ref-missing', verificationType: 'BVN', idNumber: '12345678900' });
    const results = await caughtAt(path, 2);
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(validIdentityToken(token, r.headers['x-identity-webhook-token'] as string)).toBe(true);
    }
    const bodies = Object.fromEntries(
      results
        .map((r) => JSON.parse(r.raw.toString('utf8')) as { reference: string; completedAt: string })
        .map((b) => [b.reference, b]),
    );
    expect(bodies['ref-found']).toMatchObject({
      verificationType: 'NIN',
      status: 'found',
      idLast4: '8901',
      provider: 'sandbox',
      // the holder's names as a registry writes them
      firstName: 'CHIDI',
      lastName: 'OKAFOR',
    });
    expect(bodies['ref-missing']).toMatchObject({ verificationType: 'BVN', status: 'not_found', idLast4: '8900' });
    expect(bodies['ref-missing']).not.toHaveProperty('firstName');
    expect(Number.isNaN(Date.parse(bodies['ref-found']!.completedAt))).toBe(false);
    expect(results.some((r) => r.raw.toString('utf8').includes('12345678901'))).toBe(false);
  });
});
