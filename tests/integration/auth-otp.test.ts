// auth-send-otp and the code checks of auth-verify: validation, phone normalisation, the resend
// gap, the hourly cap, concurrency, no account enumeration, expiry, single use, the attempt
// limit, context binding and replacement of an older code by a newer one.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectOtpCodeRejected, fieldsOf, get, post, postRaw } from '../support/api.ts';
import { lastOtp, smsCount, testDb } from '../support/db.ts';
import { newPhone, signUp } from '../support/users.ts';
import authForgotPassword from '../../supabase/functions/auth-forgot-password/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';

/** Moves the last send of phone more than 60 s into the past, so another code may be sent. */
async function passResendGap(e164: string): Promise<void> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${e164}`}`;
}

/** A 6-digit code different from `code`. */
const otherCode = (code: string, n = 1) => String((Number(code) + n) % 1_000_000).padStart(6, '0');

async function otpRows(e164: string) {
  return testDb()<{ context: string; attempts: number; consumed: boolean; live: boolean }[]>`
    select context, attempts, consumed_at is not null as consumed,
           (consumed_at is null and expires_at > now()) as live
      from private.otps where phone = ${e164} order by created_at`;
}

function retryAfter(res: ApiResult): number {
  const h = res.headers.get('retry-after');
  expect(h, 'Retry-After header').toMatch(/^[0-9]+$/);
  return Number(h);
}

const SENT = { success: true, status: 200, data: { sent: true, expires_in: 600, resend_after: 60 } };

describe('auth-send-otp', () => {
  describe('validation', () => {
    it('rejects a malformed phone with details on phone', async () => {
      for (
        const phone of ['+23480123', '08012345678x', '+2348012345678 ', '8012345678', '+2358012345678', '', 8012345678]
      ) {
        // @ts-expect-error malformed phones of every kind, a number among them
        const res = await post(authSendOtp, { phone, context: 'signup' });
        expect(res.status, String(phone)).toBe(400);
        expect(res.body.success).toBe(false);
        expect(res.body.status).toBe(400);
        expect(typeof res.body.error).toBe('string');
        expect(fieldsOf(res), String(phone)).toEqual(['phone']);
      }
    });

    it('rejects an unknown context (reset is not accepted here) with details on context', async () => {
      const { e164 } = newPhone();
      for (const context of ['reset', 'SIGNUP', '', 1, null]) {
        // @ts-expect-error contexts the schema refuses, on purpose
        const res = await post(authSendOtp, { phone: e164, context });
        expect(res.status, String(context)).toBe(400);
        expect(fieldsOf(res)).toEqual(['context']);
      }
      expect(await smsCount(e164)).toBe(0);
    });

    it('names unknown fields and missing fields', async () => {
      const { e164 } = newPhone();
      // @ts-expect-error an unknown field, on purpose
      const extra = await post(authSendOtp, { phone: e164, context: 'signup', channel: 'sms' });
      expect(extra.status).toBe(400);
      expect(extra.body.details).toEqual([{ field: 'channel', message: 'is not an accepted field' }]);

      // @ts-expect-error a body missing every field, on purpose
      const empty = await post(authSendOtp, {});
      expect(empty.status).toBe(400);
      // phone is required by context (signup and login; account_delete takes none): without a
      // context only the context is named
      expect(fieldsOf(empty)).toEqual(['context']);
      expect(empty.body.details).toEqual([{ field: 'context', message: 'is required' }]);
      const noPhone = await post(authSendOtp, { context: 'signup' });
      expect(noPhone.status).toBe(400);
      expect(noPhone.body.details).toEqual([{
        field: 'phone',
        message: 'is required when context is signup or login',
      }]);

      const notJson = await postRaw(authSendOtp, '{"phone":', {
        headers: { 'Content-Type': 'application/json' },
      });
      expect(notJson.status).toBe(400);
      expect(fieldsOf(notJson)).toEqual(['body']);
      expect(await smsCount(e164)).toBe(0);
    });

    it('refuses GET with 405 and an Allow header', async () => {
      const bare = await get(authSendOtp);
      expect(bare.status).toBe(405);
      expect(bare.headers.get('allow')).toContain('POST');
      expect(bare.body).toMatchObject({ success: false, status: 405 });
    });
  });

  describe('sending', () => {
    it('accepts the local format 0XXXXXXXXXX and stores the code under +234...', async () => {
      const { local, e164 } = newPhone();
      const res = await post(authSendOtp, { phone: local, context: 'signup' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(SENT);
      expect(await smsCount(e164)).toBe(1);
      expect(await smsCount(local)).toBe(0);
      expect(await lastOtp(e164)).toMatch(/^[0-9]{6}$/);
      const rows = await otpRows(e164);
      expect(rows).toEqual([{ context: 'signup', attempts: 0, consumed: false, live: true }]);
      const [stored] = await testDb()<{ code_hash: string; ttl: number }[]>`
      select code_hash, extract(epoch from expires_at - created_at)::int as ttl from private.otps where phone = ${e164}`;
      expect(stored?.ttl).toBe(600);
      // stored hashed, never in clear
      expect(stored?.code_hash).not.toContain(await lastOtp(e164));
    });

    it('refuses a resend within 60 s with 429 and Retry-After 1..60, for either context', async () => {
      const { e164 } = newPhone();
      expect((await post(authSendOtp, { phone: e164, context: 'signup' })).status).toBe(200);
      for (const context of ['signup', 'login'] as const) {
        const again = await post(authSendOtp, { phone: e164, context });
        expect(again.status).toBe(429);
        expect(again.body).toMatchObject({ success: false, status: 429, code: 'rate_limited' });
        expect(typeof again.body.error).toBe('string');
        const wait = retryAfter(again);
        expect(wait).toBeGreaterThanOrEqual(1);
        expect(wait).toBeLessThanOrEqual(60);
      }
      expect(await smsCount(e164)).toBe(1);

      // 40 s later the wait is about 20 s
      await testDb()`update private.rate_limit_events set created_at = created_at - interval '40 seconds'
                   where key = ${`otp:resend:${e164}`}`;
      const later = await post(authSendOtp, { phone: e164, context: 'signup' });
      expect(later.status).toBe(429);
      expect(retryAfter(later)).toBeGreaterThanOrEqual(18);
      expect(retryAfter(later)).toBeLessThanOrEqual(21);
      // the message says the wait in words, the same as Retry-After
      expect(later.body.error).toBe(
        `Too many codes requested: you can ask for another in ${retryAfter(later)} seconds`,
      );

      // once 60 s have passed a new code goes out
      await passResendGap(e164);
      expect((await post(authSendOtp, { phone: e164, context: 'signup' })).status).toBe(200);
      expect(await smsCount(e164)).toBe(2);
    });

    it('allows 5 codes per phone per hour; the 6th gets 429 with Retry-After until the oldest leaves the hour', async () => {
      const { e164 } = newPhone();
      // four earlier sends, 50, 40, 30 and 20 minutes ago
      for (const minutes of [50, 40, 30, 20]) {
        await testDb()`insert into private.rate_limit_events (key, created_at)
                     values (${`otp:hour:${e164}`}, now() - make_interval(mins => ${minutes}))`;
      }
      const fifth = await post(authSendOtp, { phone: e164, context: 'signup' });
      expect(fifth.status, JSON.stringify(fifth.body)).toBe(200);
      await passResendGap(e164);

      const sixth = await post(authSendOtp, { phone: e164, context: 'signup' });
      expect(sixth.status).toBe(429);
      expect(sixth.body).toMatchObject({ success: false, status: 429 });
      // the oldest (50 minutes ago) leaves the hour in 10 minutes
      const wait = retryAfter(sixth);
      expect(wait).toBeGreaterThanOrEqual(598);
      expect(wait).toBeLessThanOrEqual(601);
      expect(await smsCount(e164)).toBe(1);

      // the cap also holds for the login context and for forgot-password (same phone)
      expect((await post(authSendOtp, { phone: e164, context: 'login' })).status).toBe(429);
      expect((await post(authForgotPassword, { phone: e164 })).status).toBe(429);

      // when the oldest has left the hour, one more is allowed
      await testDb()`update private.rate_limit_events set created_at = now() - interval '61 minutes'
                   where key = ${`otp:hour:${e164}`}
                     and created_at = (select min(created_at) from private.rate_limit_events where key = ${`otp:hour:${e164}`})`;
      const after = await post(authSendOtp, { phone: e164, context: 'signup' });
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      expect(await smsCount(e164)).toBe(2);
    });

    it('the hourly cap on its own: five backdated sends > 60 s old block the next with Retry-After ~ 10 min', async () => {
      const { e164 } = newPhone();
      for (const minutes of [50, 40, 30, 20, 2]) {
        await testDb()`insert into private.rate_limit_events (key, created_at)
                     values (${`otp:hour:${e164}`}, now() - make_interval(mins => ${minutes}))`;
      }
      const res = await post(authSendOtp, { phone: e164, context: 'login' });
      expect(res.status).toBe(429);
      const wait = retryAfter(res);
      expect(wait).toBeGreaterThanOrEqual(598);
      expect(wait).toBeLessThanOrEqual(601);
      expect(await otpRows(e164)).toEqual([]);
    });

    it('10 simultaneous sends for one phone: exactly one 200, the rest 429, exactly one SMS and one code', async () => {
      const { e164 } = newPhone();
      const results = await Promise.all(
        Array.from({ length: 10 }, () => post(authSendOtp, { phone: e164, context: 'signup' })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array(9).fill(429)]);
      for (const r of results.filter((x) => x.status === 429)) {
        const wait = retryAfter(r);
        expect(wait).toBeGreaterThanOrEqual(1);
        expect(wait).toBeLessThanOrEqual(60);
      }
      expect(await smsCount(e164)).toBe(1);
      expect(await otpRows(e164)).toHaveLength(1);
      const [events] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.rate_limit_events where key = ${`otp:hour:${e164}`}`;
      expect(events?.n).toBe(1);
    });

    it('login context for a phone with no account: the same 200 body, but no SMS', async () => {
      const user = await signUp();
      await passResendGap(user.phone);
      const smsBefore = await smsCount(user.phone);
      const real = await post(authSendOtp, { phone: user.phone, context: 'login' });
      expect(real.status).toBe(200);
      expect(await smsCount(user.phone)).toBe(smsBefore + 1);

      const { local, e164 } = newPhone();
      const ghost = await post(authSendOtp, { phone: local, context: 'login' });
      expect(ghost.status).toBe(200);
      expect(ghost.body).toEqual(real.body);
      expect(ghost.body).toEqual(SENT);
      expect(Object.keys(Object.fromEntries(ghost.headers)).sort()).toEqual(
        Object.keys(Object.fromEntries(real.headers)).sort(),
      );
      expect(await smsCount(e164)).toBe(0);

      // and it is rate limited exactly like a real account
      const ghostAgain = await post(authSendOtp, { phone: e164, context: 'login' });
      const realAgain = await post(authSendOtp, { phone: user.phone, context: 'login' });
      expect(ghostAgain.status).toBe(429);
      expect(realAgain.status).toBe(429);
      expect(ghostAgain.body).toEqual(realAgain.body);
    });
  });
});

describe('no timing oracle: the same database work with and without an account (docs/auth.md)', () => {
  /** Every row a code request wrote for phone, in a form that does not depend on the phone. */
  async function footprint(e164: string) {
    const otps = await testDb()<{ context: string; live: boolean }[]>`
      select context, (consumed_at is null and expires_at > now()) as live from private.otps where phone = ${e164} order by created_at`;
    const sms = await testDb()<{ expires: boolean; withheld: string | null }[]>`
      select expires_at is not null as expires, withheld
        from private.sms_outbox where phone = ${e164} order by id`;
    const limits = await testDb()<{ key: string }[]>`
      select regexp_replace(key, '\\+234[0-9]{10}', 'PHONE') as key from private.rate_limit_events
       where key like ${`%${e164}`} order by key`;
    return {
      otps,
      sms: sms.map(({ withheld, ...rest }) => ({ ...rest, withheld: withheld !== null })),
      withheld: sms.map((r) => r.withheld),
      limits,
    };
  }

  for (
    const [name, body] of [
      ['auth-send-otp', (phone: string) => ({ phone, context: 'login' })],
      ['auth-forgot-password', (phone: string) => ({ phone })],
    ] as const
  ) {
    it(`${name}: a code row, a queued SMS row and the same rate-limit events on both paths; only the SMS row is withheld`, async () => {
      const user = await signUp();
      await passResendGap(user.phone);
      await testDb()`delete from private.rate_limit_events where key like ${`%${user.phone}`}`;
      const before = await footprint(user.phone);
      const { e164 } = newPhone();
      const real = await post(name, body(user.phone));
      const ghost = await post(name, body(e164));
      expect(ghost.status).toBe(200);
      expect(ghost.body).toEqual(real.body);
      const withAccount = await footprint(user.phone);
      const without = await footprint(e164);
      // what this request added for the phone with an account...
      const added = {
        otps: withAccount.otps.slice(before.otps.length).filter((o) => o.live),
        sms: withAccount.sms.slice(before.sms.length),
        limits: withAccount.limits,
      };
      // ...is what it wrote for the phone without one, row for row
      expect(without.otps).toEqual(added.otps);
      expect(without.limits).toEqual(added.limits);
      expect(without.sms.map((r) => ({ ...r, withheld: false }))).toEqual(added.sms);
      expect(withAccount.withheld.slice(before.sms.length)).toEqual([null]);
      expect(without.withheld).toEqual(['no_account']);
    });
  }
});

describe('auth-verify', () => {
  describe('code checks', () => {
    async function sendSignupCode(): Promise<{ local: string; e164: string; code: string }> {
      const p = newPhone();
      const sent = await post(authSendOtp, { phone: p.e164, context: 'signup' });
      expect(sent.status).toBe(200);
      return { ...p, code: await lastOtp(p.e164) };
    }

    it('validates phone, code, context and unknown fields', async () => {
      // @ts-expect-error a reset context and an unknown field, on purpose
      const res = await post(authVerify, { phone: '123', otp_code: '12345', context: 'reset', extra: true });
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toEqual(['context', 'extra', 'otp_code', 'phone']);
      for (const otp_code of ['12345', '1234567', 'abcdef', '12 456', 123456]) {
        // @ts-expect-error malformed codes, a number among them
        const bad = await post(authVerify, { phone: newPhone().e164, otp_code, context: 'signup' });
        expect(bad.status, String(otp_code)).toBe(400);
        expect(fieldsOf(bad)).toEqual(['otp_code']);
      }
    });

    it('accepts the right code once, in local format too (200 {verified, expires_in})', async () => {
      const { local, code } = await sendSignupCode();
      const ok = await post(authVerify, { phone: local, otp_code: code, context: 'signup' });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ success: true, status: 200, data: { verified: true, expires_in: 1800 } });
    });

    it('a wrong code -> 409 otp_invalid and counts one attempt; the right code still works after it', async () => {
      const { e164, code } = await sendSignupCode();
      expectOtpCodeRejected(await post(authVerify, { phone: e164, otp_code: otherCode(code), context: 'signup' }));
      expect((await otpRows(e164))[0]).toMatchObject({ attempts: 1, live: true });
      const ok = await post(authVerify, { phone: e164, otp_code: code, context: 'signup' });
      expect(ok.status).toBe(200);
    });

    it('an expired code -> 409 otp_invalid', async () => {
      const { e164, code } = await sendSignupCode();
      await testDb()`update private.otps set expires_at = now() - interval '1 second' where phone = ${e164}`;
      expectOtpCodeRejected(await post(authVerify, { phone: e164, otp_code: code, context: 'signup' }));
      const [verification] = await testDb()`select 1 from private.phone_verifications where phone = ${e164}`;
      expect(verification).toBeUndefined();
    });

    it('a code is single use', async () => {
      const { e164, code } = await sendSignupCode();
      expect((await post(authVerify, { phone: e164, otp_code: code, context: 'signup' })).status).toBe(200);
      expectOtpCodeRejected(await post(authVerify, { phone: e164, otp_code: code, context: 'signup' }));
    });

    it('the right code presented 5 times at once is accepted exactly once', async () => {
      const { e164, code } = await sendSignupCode();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => post(authVerify, { phone: e164, otp_code: code, context: 'signup' })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expectOtpCodeRejected(r);
    });

    it('5 wrong tries burn the code: the correct code fails afterwards', async () => {
      const { e164, code } = await sendSignupCode();
      for (let i = 1; i <= 5; i++) {
        expectOtpCodeRejected(
          await post(authVerify, { phone: e164, otp_code: otherCode(code, i), context: 'signup' }),
        );
      }
      expect((await otpRows(e164))[0]).toMatchObject({ attempts: 5, consumed: true, live: false });
      expectOtpCodeRejected(await post(authVerify, { phone: e164, otp_code: code, context: 'signup' }));
      const [verification] = await testDb()`select 1 from private.phone_verifications where phone = ${e164}`;
      expect(verification).toBeUndefined();
    });

    it('4 wrong tries leave the code usable', async () => {
      const { e164, code } = await sendSignupCode();
      for (let i = 1; i <= 4; i++) {
        expectOtpCodeRejected(
          await post(authVerify, { phone: e164, otp_code: otherCode(code, i), context: 'signup' }),
        );
      }
      expect((await post(authVerify, { phone: e164, otp_code: code, context: 'signup' })).status).toBe(200);
    });

    it('20 concurrent wrong guesses never record more than 5 attempts, and the code is burnt', async () => {
      const { e164, code } = await sendSignupCode();
      const results = await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) => post(authVerify, { phone: e164, otp_code: otherCode(code, i + 1), context: 'signup' }),
        ),
      );
      for (const r of results) expectOtpCodeRejected(r);
      const rows = await otpRows(e164);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.attempts).toBeLessThanOrEqual(5);
      expect(rows[0]?.attempts).toBe(5);
      expect(rows[0]?.consumed).toBe(true);
      expectOtpCodeRejected(await post(authVerify, { phone: e164, otp_code: code, context: 'signup' }));
    });

    it('a code is bound to its context: a login code does not verify signup, a signup code does not log in', async () => {
      // a phone with an account holds a live (undelivered) signup code and a delivered login code
      const user = await signUp();
      await passResendGap(user.phone);
      expect((await post(authSendOtp, { phone: user.phone, context: 'signup' })).status).toBe(200);
      await passResendGap(user.phone);
      expect((await post(authSendOtp, { phone: user.phone, context: 'login' })).status).toBe(200);
      const loginCode = await lastOtp(user.phone);
      expect((await otpRows(user.phone)).filter((r) => r.live).map((r) => r.context).sort()).toEqual([
        'login',
        'signup',
      ]);
      expectOtpCodeRejected(await post(authVerify, { phone: user.phone, otp_code: loginCode, context: 'signup' }));
      // the login code is untouched by that try and still logs in
      const login = await post(authVerify, {
        phone: user.phone,
        otp_code: loginCode,
        context: 'login',
        password: user.password,
      });
      expect(login.status, JSON.stringify(login.body)).toBe(200);

      // a phone without an account holds a live (undelivered) login code and a delivered signup code
      const { e164 } = newPhone();
      expect((await post(authSendOtp, { phone: e164, context: 'login' })).status).toBe(200);
      expect(await smsCount(e164)).toBe(0);
      await passResendGap(e164);
      expect((await post(authSendOtp, { phone: e164, context: 'signup' })).status).toBe(200);
      const signupCode = await lastOtp(e164);
      const asLogin = await post(authVerify, {
        phone: e164,
        otp_code: signupCode,
        context: 'login',
        password: 'whatever it is',
      });
      expect(asLogin.status).toBe(401);
      // the signup code was not spent by that try: it still verifies the signup
      expect((await otpRows(e164)).find((r) => r.context === 'signup')).toMatchObject({ attempts: 0, live: true });
      expect((await post(authVerify, { phone: e164, otp_code: signupCode, context: 'signup' })).status).toBe(200);
    });

    it('a code is bound to its phone', async () => {
      const a = await sendSignupCode();
      const b = await sendSignupCode();
      if (a.code !== b.code) {
        expectOtpCodeRejected(await post(authVerify, { phone: b.e164, otp_code: a.code, context: 'signup' }));
      }
      expectOtpCodeRejected(await post(authVerify, { phone: newPhone().e164, otp_code: a.code, context: 'signup' }));
      expect((await post(authVerify, { phone: a.e164, otp_code: a.code, context: 'signup' })).status).toBe(200);
    });

    it('a newer code replaces the older one', async () => {
      const { e164, code: first } = await sendSignupCode();
      let second = first;
      // codes are random: in the one-in-a-million case of a repeat, ask again
      for (let i = 0; i < 3 && second === first; i++) {
        await passResendGap(e164);
        expect((await post(authSendOtp, { phone: e164, context: 'signup' })).status).toBe(200);
        second = await lastOtp(e164);
      }
      expect(second).not.toBe(first);
      const rows = await otpRows(e164);
      expect(rows.filter((r) => r.live)).toHaveLength(1);
      expectOtpCodeRejected(await post(authVerify, { phone: e164, otp_code: first, context: 'signup' }));
      expect((await post(authVerify, { phone: e164, otp_code: second, context: 'signup' })).status).toBe(200);
    });
  });
});
