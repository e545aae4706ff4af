// KYC through the real server with the real Sumsub and identity adapters, against the KYC fake
// (tests/fakes/kyc.ts), whose webhooks are signed as the providers sign them: kyc-start, the
// webhook-kyc reviews (GREEN, RED RETRY/FINAL, redeliveries, late older reviews, other types,
// tampered or missing signatures), identity-verify and webhook-identity, and the tier they raise
// and lower, with its notifications and SMS.
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ApiResult, baseUrl, type BodyOf, expectOk, get, post } from '../support/api.ts';
import { lastSms, testDb } from '../support/db.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { signUp, type TestUser } from '../support/users.ts';
import identityVerify from '../../supabase/functions/identity-verify/handler.ts';
import kycStart from '../../supabase/functions/kyc-start/handler.ts';
import kycStatus from '../../supabase/functions/kyc-status/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import profilePublicGet from '../../supabase/functions/profile-public-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';

/** A random 11-digit number not ending in 0: a NIN or BVN no other test uses (numbers are bound to one account). */
const eleven = () => `${String(randomInt(1, 10_000_000_000)).padStart(10, '0')}${randomInt(1, 10)}`;
const status = async (u: TestUser) => expectOk(await get(kycStatus, { token: u.accessToken }));
const tierOf = async (u: TestUser) => (await status(u)).tier as number;
const review = (u: TestUser, level: 'tier-1' | 'tier-2', answer: 'GREEN' | 'RED', extra = {}) =>
  kycFake.sumsubReview({ userId: u.id, levelName: level, answer, ...extra });
const accountNotes = async (u: TestUser, event: string) =>
  (expectOk(await get(notificationList, { token: u.accessToken })) as { event_type: string; content: string }[])
    .filter((n) => n.event_type === event);

function received(d: { responses: { status: number; body: unknown }[] }, n = 1) {
  expect(d.responses).toHaveLength(n);
  for (const r of d.responses) {
    expect(r, JSON.stringify(r)).toEqual({
      status: 200,
      body: { success: true, status: 200, data: { received: true } },
    });
  }
}

/** identity-verify, then the provider's result for that request; answers the reference. */
async function verifyIdentity(
  u: TestUser,
  type: BodyOf<typeof identityVerify>['type'],
  id_number: string,
  result = 'found',
  extra: Partial<BodyOf<typeof identityVerify>> = {},
) {
  const r = expectOk(await post(identityVerify, { type, id_number, ...extra }, { token: u.accessToken }), 201);
  received(await kycFake.identityResult({ reference: r.reference, status: result }));
  return r.reference as string;
}

describe('kyc-start', () => {
  it('a level already passed is 409 kyc_check_passed: nothing is asked of the provider', async () => {
    const u = await signUp();
    expectOk(await post(kycStart, { level: 1 }, { token: u.accessToken }));
    received(await review(u, 'tier-1', 'GREEN'));
    const before = (await kycFake.requests('/resources/accessTokens/sdk')).filter((r) => r.body?.userId === u.id);
    const again = await post(kycStart, { level: 1 }, { token: u.accessToken });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'kyc_check_passed', error: 'this check has already passed' });
    const after = (await kycFake.requests('/resources/accessTokens/sdk')).filter((r) => r.body?.userId === u.id);
    expect(after).toHaveLength(before.length);
  });

  it('answers an SDK token from Sumsub for the level, asked with a correctly signed request, and marks the check pending', async () => {
    const u = await signUp();
    const s = expectOk(await post(kycStart, { level: 1 }, { token: u.accessToken }));
    expect(s.level).toBe(1);
    expect(s.expires_in).toBe(600);
    expect(s.token).toMatch(/^_act-sbx-/);
    const asked = (await kycFake.requests('/resources/accessTokens/sdk')).filter((r) => r.body?.userId === u.id);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.body).toEqual({ userId: u.id, levelName: 'tier-1', ttlInSecs: 600 });
    expect(asked[0]?.sumsub?.signatureValid).toBe(true);
    expect((await status(u)).checks).toEqual([expect.objectContaining({ type: 'kyc_basic', status: 'pending' })]);
  });

  it('validates the level, needs a session, and answers 503 when Sumsub is down (nothing started)', async () => {
    const u = await signUp();
    for (const level of [0, 3, '1', null]) {
      // @ts-expect-error levels of every wrong kind, on purpose
      const r = await post(kycStart, { level }, { token: u.accessToken });
      expect(r.status).toBe(400);
      expect(r.body.details[0]!.field).toBe('level');
    }
    expect((await post(kycStart, { level: 1 })).status).toBe(401);
    await kycFake.fail({ path: '/resources/accessTokens/sdk', mode: 'unavailable', field: 'userId', value: u.id });
    try {
      const r = await post(kycStart, { level: 2 }, { token: u.accessToken });
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body).toMatchObject({
        code: 'provider_unavailable',
        error: 'The verification provider is unavailable; try again shortly',
      });
      expect(JSON.stringify(r.body)).not.toContain('test-suite');
    } finally {
      await kycFake.clearFail({ path: '/resources/accessTokens/sdk', field: 'userId', value: u.id });
    }
  });
});

describe('webhook-kyc', () => {
  it('GREEN for tier-1 then tier-2 raises the tier at once, each change a notification and an SMS', async () => {
    const u = await signUp();
    received(await review(u, 'tier-1', 'GREEN'));
    expect(await tierOf(u)).toBe(1);
    expect(await lastSms(u.phone)).toContain('tier 1');
    received(await review(u, 'tier-2', 'GREEN'));
    const s = await status(u);
    expect(s.tier).toBe(2);
    expect(s.limits).toEqual({ single: 200_000, daily: 500_000, balance: 500_000 });
    expect(s.next_tier).toEqual({ tier: 3, needs: ['nin', 'bvn'] });
    const changes = await accountNotes(u, 'kyc_tier_changed');
    expect(changes.map((n) => n.content)).toEqual([
      'Your account is now verified to tier 2: your limits are higher.',
      'Your account is now verified to tier 1: your limits are higher.',
    ]);
    // the public profile shows it
    const other = await signUp();
    expect(expectOk(await get(profilePublicGet, { token: other.accessToken, query: { user_id: u.id } })).kyc_tier)
      .toBe(2);
  });

  it('tier-2 alone passes the check but raises nothing: every lower tier is needed too', async () => {
    const u = await signUp();
    received(await review(u, 'tier-2', 'GREEN'));
    const s = await status(u);
    expect(s.tier).toBe(0);
    expect(s.checks).toEqual([expect.objectContaining({ type: 'kyc_address', status: 'passed' })]);
    expect(s.next_tier).toEqual({ tier: 1, needs: ['kyc_basic'] });
    received(await review(u, 'tier-1', 'GREEN'));
    expect(await tierOf(u)).toBe(2);
  });

  it('a redelivered event, even 10 at once, has one effect', async () => {
    const u = await signUp();
    received(await review(u, 'tier-1', 'GREEN', { times: 10, concurrent: true }), 10);
    expect(await tierOf(u)).toBe(1);
    expect(await accountNotes(u, 'kyc_tier_changed')).toHaveLength(1);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.kyc_webhook_inbox where user_id = ${u.id}`;
    expect(n?.n).toBe(1);
  });

  it('RED RETRY records the labels and lets the user try again; RED FINAL does not (kyc-start 409)', async () => {
    const u = await signUp();
    received(await review(u, 'tier-1', 'RED', { rejectLabels: ['UNSATISFACTORY_PHOTOS', 'SCREENSHOTS'] }));
    let s = await status(u);
    expect(s.tier).toBe(0);
    expect(s.checks).toEqual([
      expect.objectContaining({
        type: 'kyc_basic',
        status: 'failed',
        reject_labels: ['UNSATISFACTORY_PHOTOS', 'SCREENSHOTS'],
        can_retry: true,
      }),
    ]);
    expect((await accountNotes(u, 'verification_failed'))[0]?.content).toContain('You can try again');
    expectOk(await post(kycStart, { level: 1 }, { token: u.accessToken }));
    received(await review(u, 'tier-1', 'RED', { reviewRejectType: 'FINAL', rejectLabels: ['FORGERY'] }));
    s = await status(u);
    expect(s.checks[0]).toMatchObject({ status: 'failed', reject_labels: ['FORGERY'], can_retry: false });
    const again = await post(kycStart, { level: 1 }, { token: u.accessToken });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'kyc_check_rejected',
      error: 'this check was rejected for good and cannot be tried again',
    });
  });

  it('a FINAL rejection of a passed check lowers the tier (notification and SMS); a RETRY does not', async () => {
    const u = await signUp();
    received(await review(u, 'tier-1', 'GREEN'));
    received(await review(u, 'tier-2', 'GREEN'));
    received(await review(u, 'tier-2', 'RED', { reviewRejectType: 'RETRY' }));
    expect(await tierOf(u)).toBe(2);
    received(await review(u, 'tier-1', 'RED', { reviewRejectType: 'FINAL' }));
    expect(await tierOf(u)).toBe(0);
    expect((await accountNotes(u, 'kyc_tier_changed'))[0]?.content).toContain('now at tier 0');
    expect(await lastSms(u.phone)).toContain('limits are lower');
    // and the limits follow at once
    const r = await post(walletTopup, { amount: 25_000 }, { token: u.accessToken });
    expect(r.status).toBe(403);
  });

  it('keeps in the inbox only what the service reads: no names, date of birth, document number or comments', async () => {
    const u = await signUp();
    const personal = ['Chiamaka', 'Nwankwo', '1990-04-12', 'A09876543', '12 Allen Avenue', 'looks like Chiamaka'];
    const event = {
      type: 'applicantReviewed',
      applicantId: 'a'.repeat(24),
      externalUserId: u.id,
      levelName: 'tier-1',
      reviewStatus: 'completed',
      createdAtMs: '2026-11-20 10:00:00.000',
      info: { firstName: personal[0], lastName: personal[1], dob: personal[2], country: 'NGA' },
      idDocs: [{ idDocType: 'PASSPORT', number: personal[3] }],
      address: personal[4],
      reviewResult: { reviewAnswer: 'GREEN', moderationComment: personal[5], clientComment: personal[5] },
    };
    received(await kycFake.sumsubEvent(event));
    expect(await tierOf(u)).toBe(1);
    const [row] = await testDb()<{ payload: Record<string, unknown> }[]>`
      select payload from private.kyc_webhook_inbox where user_id = ${u.id}`;
    expect(row?.payload).toEqual({
      type: 'applicantReviewed',
      applicantId: 'a'.repeat(24),
      externalUserId: u.id,
      levelName: 'tier-1',
      reviewStatus: 'completed',
      createdAtMs: '2026-11-20 10:00:00.000',
      reviewResult: { reviewAnswer: 'GREEN' },
    });
    for (const p of personal) expect(JSON.stringify(row?.payload)).not.toContain(p);
  });

  it('the migration scrubs the personal fields of rows kept before it, and leaves what the service reads', async () => {
    const key = `sumsub:test-${crypto.randomUUID()}`;
    const old = {
      type: 'applicantReviewed',
      externalUserId: crypto.randomUUID(),
      levelName: 'tier-2',
      info: { firstName: 'Chiamaka', dob: '1990-04-12' },
      idDocs: [{ number: 'A09876543' }],
      reviewResult: {
        reviewAnswer: 'RED',
        rejectLabels: ['FORGERY'],
        reviewRejectType: 'FINAL',
        moderationComment: 'x',
      },
    };
    await testDb()`insert into private.kyc_webhook_inbox (key, source, event_type, outcome, payload)
                   values (${key}, 'sumsub', 'applicantReviewed', 'unknown_user', ${testDb().json(old)})`;
    const migration = readFileSync('supabase/migrations/20261127060000_kyc_inbox_minimal.sql', 'utf8');
    const scrub = migration.slice(migration.indexOf('-- the rows already stored'));
    await testDb().unsafe(scrub);
    const [row] = await testDb()<
      { payload: unknown }[]
    >`select payload from private.kyc_webhook_inbox where key = ${key}`;
    expect(row?.payload).toEqual({
      type: 'applicantReviewed',
      externalUserId: old.externalUserId,
      levelName: 'tier-2',
      reviewResult: { reviewAnswer: 'RED', rejectLabels: ['FORGERY'], reviewRejectType: 'FINAL' },
    });
  });

  it('a late review older than the one applied is ignored', async () => {
    const u = await signUp();
    received(await review(u, 'tier-1', 'GREEN', { createdAtMs: '2026-11-20 10:00:00.500' }));
    received(await review(u, 'tier-1', 'RED', { reviewRejectType: 'FINAL', createdAtMs: '2026-11-20 09:59:59.000' }));
    expect(await tierOf(u)).toBe(1);
    const [row] = await testDb()<{ outcome: string }[]>`
      select outcome from private.kyc_webhook_inbox where user_id = ${u.id} order by received_at desc limit 1`;
    expect(row?.outcome).toBe('kyc_basic:stale');
  });

  it('a review time outside the years 1 to 9999 (UTC) is no time: the review applies, never a 500', async () => {
    for (const createdAtMs of ['0000-01-01 00:00:00.000', '0001-01-01 00:00:00+2359', '9999-12-31 23:59:59.999-2359']) {
      const u = await signUp();
      received(await review(u, 'tier-1', 'GREEN', { createdAtMs }));
      expect(await tierOf(u), createdAtMs).toBe(1);
    }
  });

  it('accepts SHA-256 and SHA-1 digests named by x-payload-digest-alg, SHA-512 without the header', async () => {
    for (const alg of ['HMAC_SHA256_HEX', 'HMAC_SHA1_HEX', null] as const) {
      const u = await signUp();
      received(await review(u, 'tier-1', 'GREEN', { alg }));
      expect(await tierOf(u)).toBe(1);
    }
  });

  it('refuses (401) a missing, tampered or wrong-algorithm signature, and applies nothing', async () => {
    const u = await signUp();
    const bad = await review(u, 'tier-1', 'GREEN', { signature: 'ab'.repeat(64) });
    expect(bad.responses[0]?.status).toBe(401);
    const body = JSON.stringify({ type: 'applicantReviewed', externalUserId: u.id });
    const variants: Record<string, string>[] = [
      {},
      { 'x-payload-digest': 'zz' },
      { 'x-payload-digest-alg': 'HMAC_MD5_HEX', 'x-payload-digest': '00' },
    ];
    for (const headers of variants) {
      const r = await fetch(`${baseUrl()}/webhook-kyc`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
      });
      expect(r.status).toBe(401);
      await r.body?.cancel();
    }
    expect(await tierOf(u)).toBe(0);
  });

  it('answers 200 to other event types and to unknown users or levels, keeping them and applying nothing', async () => {
    const u = await signUp();
    received(await review(u, 'tier-1', 'GREEN', { type: 'applicantPending' }));
    received(await kycFake.sumsubEvent({ type: 'applicantCreated', externalUserId: u.id, levelName: 'tier-1' }));
    received(await kycFake.sumsubReview({ userId: crypto.randomUUID(), levelName: 'tier-1', answer: 'GREEN' }));
    received(await kycFake.sumsubReview({ userId: 'not-a-uuid', levelName: 'tier-1', answer: 'GREEN' }));
    received(await kycFake.sumsubReview({ userId: u.id, levelName: 'some-other-level', answer: 'GREEN' }));
    expect(await tierOf(u)).toBe(0);
    const rows = await testDb()<{ outcome: string }[]>`
      select outcome from private.kyc_webhook_inbox where user_id = ${u.id} order by received_at`;
    expect(rows.map((r) => r.outcome)).toEqual(['ignored', 'ignored', 'unknown_level']);
    // a body that is not JSON, correctly signed, is a 400 (nothing to apply)
    const junk = await kycFake.sumsubEvent('not json');
    expect(junk.responses[0]?.status).toBe(400);
  });
});

describe('identity-verify and webhook-identity', () => {
  it('records a pending check, asks the provider, and the result raises the tier to 3 with nin and bvn', async () => {
    const u = await signUp({ tier: 2 });
    const nin = eleven();
    const ref = await verifyIdentity(u, 'nin', `${nin.slice(0, 3)} ${nin.slice(3, 7)} ${nin.slice(7)}`);
    expect(ref).toMatch(/^idv_[0-9a-f]{32}$/);
    const asked = (await kycFake.requests('/identity/verifications')).filter((r) => r.body?.reference === ref);
    expect(asked).toHaveLength(1);
    // with the holder as the profile names them (signUp's Ada Obi) and the phone
    expect(asked[0]?.body).toEqual({
      reference: ref,
      verificationType: 'NIN',
      idNumber: nin,
      firstName: 'Ada',
      lastName: 'Obi',
      phone: u.phone,
    });
    expect(asked[0]?.identity?.authorized).toBe(true);
    expect(await tierOf(u)).toBe(2);
    await verifyIdentity(u, 'bvn', eleven());
    const s = await status(u);
    expect(s.tier).toBe(3);
    expect(s.limits).toEqual({ single: 5_000_000, daily: 5_000_000, balance: null });
    expect(s.next_tier).toEqual({ tier: 4, needs: ['cac', 'tin', 'director_match', 'bank_account'] });
  });

  it('keeps no identity number whole: a keyed hash and the last 4 only, nowhere in answers or the inbox', async () => {
    const u = await signUp();
    const ref = await verifyIdentity(u, 'bvn', '31415926535');
    const [req] = await testDb()<
      Record<string, unknown>[]
    >`select * from private.identity_requests where reference = ${ref}`;
    expect(req?.id_last4).toBe('6535');
    expect(req?.id_hash).toMatch(/^[0-9a-f]{64}$/);
    const everything = JSON.stringify(
      await testDb()`
      select (select json_agg(r) from private.identity_requests r where r.user_id = ${u.id}) as requests,
             (select json_agg(k) from private.kyc_checks k where k.user_id = ${u.id}) as checks,
             (select json_agg(i) from private.kyc_webhook_inbox i where i.user_id = ${u.id}) as inbox`,
    );
    expect(everything).not.toContain('31415926535');
    expect(JSON.stringify(await status(u))).not.toContain('3141592');
  });

  it('a result other than found is a failure the user may retry; a passed check cannot be asked again', async () => {
    const u = await signUp();
    await verifyIdentity(u, 'nin', '12345678900', 'not_found');
    expect((await status(u)).checks).toEqual([
      expect.objectContaining({ type: 'nin', status: 'failed', reject_labels: ['NOT_FOUND'], can_retry: true }),
    ]);
    const nin = eleven();
    await verifyIdentity(u, 'nin', nin);
    expect((await status(u)).checks[0]).toMatchObject({ type: 'nin', status: 'passed' });
    const again = await post(identityVerify, { type: 'nin', id_number: nin }, { token: u.accessToken });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'kyc_check_passed', error: 'this check has already passed' });
  });

  describe('identity-verify', () => {
    it('validates each type: 11-digit NIN/BVN, CAC and TIN formats, bank_code only for bank_account, rc_number only for director', async () => {
      const u = await signUp();
      const bad: [Record<string, unknown>, string][] = [
        [{ type: 'nin', id_number: '1234567890' }, 'id_number'],
        [{ type: 'bvn', id_number: '1234567890a' }, 'id_number'],
        [{ type: 'cac', id_number: 'XX12' }, 'id_number'],
        [{ type: 'tin', id_number: '12345678' }, 'id_number'],
        [{ type: 'bank_account', id_number: '0123456789' }, 'bank_code'],
        [{ type: 'nin', id_number: '12345678901', bank_code: '058' }, 'bank_code'],
        [{ type: 'director', id_number: '12345678901' }, 'rc_number'],
        [{ type: 'nin', id_number: '12345678901', rc_number: 'RC1' }, 'rc_number'],
        [{ type: 'passport', id_number: '12345678901' }, 'type'],
        [{ type: 'nin', id_number: 12345678901 }, 'id_number'],
      ];
      for (const [body, field] of bad) {
        // @ts-expect-error the table holds bodies the schema refuses, on purpose
        const r = await post(identityVerify, body, { token: u.accessToken });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.details.map((d: { field: string }) => d.field), JSON.stringify(body)).toContain(field);
      }
      expect((await kycFake.requests('/identity/verifications')).filter((r) => r.body?.idNumber === '1234567890'))
        .toHaveLength(0);
      // the business checks reach tier 4 with every lower tier
      const biz = await signUp({ tier: 3 });
      await verifyIdentity(biz, 'cac', 'rc 1234567');
      await verifyIdentity(biz, 'tin', '12345678-0001');
      await verifyIdentity(biz, 'director', '12345678901', 'found', { rc_number: 'RC1234567' });
      await verifyIdentity(biz, 'bank_account', '0123456789', 'found', { bank_code: '058' });
      expect(await tierOf(biz)).toBe(4);
      expect((await status(biz)).next_tier).toBeNull();
    });

    it('the identity provider being down is 503, the check is not left pending, and the user may ask again', async () => {
      const u = await signUp();
      await kycFake.fail({
        path: '/identity/verifications',
        mode: 'unavailable',
        field: 'idNumber',
        value: '55555555551',
      });
      try {
        const r = await post(identityVerify, { type: 'nin', id_number: '55555555551' }, { token: u.accessToken });
        expect(r.status, JSON.stringify(r.body)).toBe(503);
        expect(r.body).toMatchObject({ code: 'provider_unavailable' });
        expect(JSON.stringify(r.body)).not.toContain('55555555551');
      } finally {
        await kycFake.clearFail({ path: '/identity/verifications', field: 'idNumber', value: '55555555551' });
      }
      expect((await status(u)).checks).toEqual([]);
      await verifyIdentity(u, 'nin', '55555555551');
      expect((await status(u)).checks[0]).toMatchObject({ status: 'passed' });
    });

    it('the identity provider refusing the request is 502 kyc_provider_refused, and the check is not left pending', async () => {
      const u = await signUp();
      await kycFake.fail({ path: '/identity/verifications', mode: 'refuse', field: 'idNumber', value: '55555555552' });
      try {
        const r = await post(identityVerify, { type: 'nin', id_number: '55555555552' }, { token: u.accessToken });
        expect(r.status, JSON.stringify(r.body)).toBe(502);
        expect(r.body).toMatchObject({ code: 'kyc_provider_refused' });
        expect(r.body.error).toMatch(/^The identity-check provider refused the request \(.*\); try again later$/);
        expect(JSON.stringify(r.body)).not.toContain('55555555552');
      } finally {
        await kycFake.clearFail({ path: '/identity/verifications', field: 'idNumber', value: '55555555552' });
      }
      expect((await status(u)).checks).toEqual([]);
    });

    it('at most 3 requests a day for each type of check (each is a paid lookup): the 4th of one type is 429 with Retry-After, another type still passes', async () => {
      const u = await signUp();
      for (let i = 0; i < 3; i++) {
        expectOk(
          await post(identityVerify, { type: 'tin', id_number: `1234567${i}-0001` }, { token: u.accessToken }),
          201,
        );
      }
      const r: ApiResult = await post(identityVerify, { type: 'tin', id_number: '12345679-0001' }, {
        token: u.accessToken,
      });
      expect(r.status).toBe(429);
      expect(r.body).toMatchObject({ code: 'rate_limited' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(80_000);
      expect(r.body.error).toContain('Too many TIN checks: at most 3 a day for each type of check');
      // the other types are counted apart
      expectOk(await post(identityVerify, { type: 'cac', id_number: 'RC7654321' }, { token: u.accessToken }), 201);
    });

    it('a business asks for its six checks in one day and reaches tier 4 (six types, one request each)', async () => {
      const biz = await signUp({ tier: 2 });
      await verifyIdentity(biz, 'nin', eleven());
      await verifyIdentity(biz, 'bvn', eleven());
      await verifyIdentity(biz, 'cac', 'RC1234567');
      await verifyIdentity(biz, 'tin', '1234567890');
      await verifyIdentity(biz, 'director', eleven(), 'found', { rc_number: 'RC1234567' });
      await verifyIdentity(biz, 'bank_account', '0123456789', 'found', { bank_code: '058' });
      expect(await tierOf(biz)).toBe(4);
    });

    it('a TIN: FIRS with or without its dash is one number (sent and hashed as 12345678-0001); a 10-digit JTB TIN is accepted', async () => {
      const u = await signUp();
      const first = await verifyIdentity(u, 'tin', '876543210001', 'not_found');
      const second = await verifyIdentity(u, 'tin', '87654321 - 0001', 'not_found');
      const jtb = await verifyIdentity(u, 'tin', '20 1234 5678');
      const sent = await kycFake.requests('/identity/verifications');
      const idOf = (ref: string) => sent.find((r) => r.body?.reference === ref)?.body?.idNumber;
      expect([idOf(first), idOf(second), idOf(jtb)]).toEqual(['87654321-0001', '87654321-0001', '2012345678']);
      const hashes = await testDb()<{ reference: string; id_hash: string; id_last4: string }[]>`
        select reference, id_hash, id_last4 from private.identity_requests where user_id = ${u.id}`;
      const hashOf = (ref: string) => hashes.find((h) => h.reference === ref)?.id_hash;
      expect(hashOf(first)).toBe(hashOf(second));
      expect(hashOf(jtb)).not.toBe(hashOf(first));
      expect((await status(u)).checks).toEqual([expect.objectContaining({ type: 'tin', status: 'passed' })]);
      for (const id_number of ['12345678', '1234567-0001', '123456789', '12345678-00011', '12345678--0001']) {
        const r = await post(identityVerify, { type: 'tin', id_number }, { token: u.accessToken });
        expect(r.status, id_number).toBe(400);
      }
    });
  });

  describe('webhook-identity', () => {
    it('a wrong token is 401; a redelivery, a second result or a wrong type change nothing; unknown references are kept', async () => {
      const u = await signUp({ tier: 2 });
      const nin = async () => ((await status(u)).checks as { type: string }[]).find((c) => c.type === 'nin');
      const r = expectOk(
        await post(identityVerify, { type: 'nin', id_number: eleven() }, { token: u.accessToken }),
        201,
      );
      const forged = await kycFake.identityResult({ reference: r.reference, token: 'not-the-token' });
      expect(forged.responses[0]?.status).toBe(401);
      const wrongType = await kycFake.identityResult({ reference: r.reference, verificationType: 'BVN' });
      received(wrongType);
      expect(await nin()).toMatchObject({ status: 'pending' });
      received(await kycFake.identityResult({ reference: r.reference, times: 5, concurrent: true }), 5);
      received(await kycFake.identityResult({ reference: r.reference, status: 'not_found' }));
      expect(await nin()).toMatchObject({ status: 'passed' });
      const unknown = `idv_${'0'.repeat(32)}`;
      received(await kycFake.identityResult({ reference: unknown, verificationType: 'NIN' }));
      const rows = await testDb()<{ outcome: string; user_id: string | null }[]>`
      select outcome, user_id from private.kyc_webhook_inbox where key like ${`identity:${unknown}:%`}`;
      expect(rows).toEqual([{ outcome: 'unknown_reference', user_id: null }]);
      const outcomes = await testDb()<{ outcome: string }[]>`
      select outcome from private.kyc_webhook_inbox where key like ${`identity:${r.reference}:%`} order by received_at`;
      expect(outcomes.map((o) => o.outcome)).toEqual(['type_mismatch', 'nin:passed', 'already_done']);
    });
  });
});
