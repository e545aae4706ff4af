// Login: auth-verify with context login and a password. Session shape, identical failures for a
// wrong password, an unknown phone and a wrong code, validation, and the wrong password counting
// as a failed try on the code.
import { describe, expect, it } from 'vitest';
import { type ApiResult, type DataOf, type Envelope, fieldsOf, get, post } from '../support/api.ts';
import { lastOtp, smsCount, testDb } from '../support/db.ts';
import { newPhone, signUp, type TestUser } from '../support/users.ts';
import authRefresh from '../../supabase/functions/auth-refresh/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';

/** Moves the last send of phone more than 60 s into the past, so another code may be sent. */
async function passResendGap(e164: string): Promise<void> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${e164}`}`;
}

const otherCode = (code: string, n = 1) => String((Number(code) + n) % 1_000_000).padStart(6, '0');

/** Sends a login code to a user's phone and returns it. */
async function loginCode(phone: string): Promise<string> {
  await passResendGap(phone);
  const sent = await post(authSendOtp, { phone, context: 'login' });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return lastOtp(phone);
}

async function loginAttempts(phone: string): Promise<{ attempts: number; live: boolean }[]> {
  return testDb()<{ attempts: number; live: boolean }[]>`
    select attempts, (consumed_at is null and expires_at > now()) as live
      from private.otps where phone = ${phone} and context = 'login' order by created_at`;
}

const LOGIN_FAILED = {
  success: false,
  status: 401,
  code: 'login_failed',
  error: 'Invalid phone number, code or password',
};

/** auth-verify's answer to a login: the user and a session. */
type Login = Extract<DataOf<typeof authVerify>, { session: unknown }>;

function expectSession(
  res: ApiResult,
  user: { id: string; phone: string },
): asserts res is ApiResult<Envelope<Login>> {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.success).toBe(true);
  expect(res.body.status).toBe(200);
  expect(Object.keys(res.body.data).sort()).toEqual(['session', 'user']);
  expect(res.body.data.user).toEqual({ id: user.id, phone: user.phone });
  const s = res.body.data.session;
  expect(Object.keys(s).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
  expect(s.expires_in).toBe(3600);
  expect(s.token_type).toBe('bearer');
  expect(s.access_token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  expect(typeof s.refresh_token).toBe('string');
  expect(s.refresh_token.length).toBeGreaterThanOrEqual(32);
}

describe('auth-verify', () => {
  describe('login: context login', () => {
    it('returns 200 with the same session shape as signup, and the session works', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      const res = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: user.password,
      });
      expectSession(res, user);
      const { access_token, refresh_token } = res.body.data.session;
      // a new session, distinct from the signup one
      expect(access_token).not.toBe(user.accessToken);
      expect(refresh_token).not.toBe(user.refreshToken);

      const profile = await get(profileGet, { token: access_token });
      expect(profile.status).toBe(200);
      expect(profile.body.data).toMatchObject({ id: user.id, phone_number: user.phone });
      const refreshed = await post(authRefresh, { refresh_token });
      expect(refreshed.status).toBe(200);
      // the signup session keeps working alongside
      expect((await get(profileGet, { token: user.accessToken })).status).toBe(200);
    });

    it('accepts the phone in local format and answers with E.164', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      const local = `0${user.phone.slice(4)}`;
      const res = await post(authVerify, {
        phone: local,
        otp_code: code,
        context: 'login',
        password: user.password,
      });
      expectSession(res, user);
    });

    it('the code is single use for login too', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      expect(
        (await post(authVerify, { phone: user.phone, otp_code: code, context: 'login', password: user.password }))
          .status,
      ).toBe(200);
      const again = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: user.password,
      });
      expect(again.status).toBe(401);
      expect(again.body).toEqual(LOGIN_FAILED);
    });

    it('an expired login code -> 401', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      await testDb()`update private.otps set expires_at = now() - interval '1 second' where phone = ${user.phone} and context = 'login'`;
      const res = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: user.password,
      });
      expect(res.body).toEqual(LOGIN_FAILED);
    });

    it('wrong password, unknown phone and wrong code all give the identical 401 body', async () => {
      const user = await signUp();

      const code = await loginCode(user.phone);
      const wrongPassword = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: 'not the password',
      });

      const stranger = newPhone();
      expect((await post(authSendOtp, { phone: stranger.e164, context: 'login' })).status).toBe(200);
      expect(await smsCount(stranger.e164)).toBe(0);
      const unknownPhone = await post(authVerify, {
        phone: stranger.e164,
        otp_code: code,
        context: 'login',
        password: user.password,
      });

      const wrongCode = await post(authVerify, {
        phone: user.phone,
        otp_code: otherCode(code),
        context: 'login',
        password: user.password,
      });

      // a phone that never asked for a code
      const noCode = await post(authVerify, {
        phone: newPhone().e164,
        otp_code: code,
        context: 'login',
        password: user.password,
      });

      for (const r of [wrongPassword, unknownPhone, wrongCode, noCode]) {
        expect(r.status).toBe(401);
        expect(r.body).toEqual(LOGIN_FAILED);
      }
      expect(JSON.stringify(wrongPassword.body)).toBe(JSON.stringify(unknownPhone.body));
      expect(JSON.stringify(wrongPassword.body)).toBe(JSON.stringify(wrongCode.body));
      expect(wrongPassword.headers.get('content-type')).toBe(unknownPhone.headers.get('content-type'));
    });

    it('a wrong password counts as a failed try on the code; the right password still works after it', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      const bad = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: 'not the password',
      });
      expect(bad.status).toBe(401);
      expect(await loginAttempts(user.phone)).toEqual([{ attempts: 1, live: true }]);
      const good = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: user.password,
      });
      expectSession(good, user);
    });

    it('5 wrong passwords burn the code: the right password with that code fails', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      for (let i = 0; i < 5; i++) {
        const bad = await post(authVerify, {
          phone: user.phone,
          otp_code: code,
          context: 'login',
          password: `wrong password ${i}`,
        });
        expect(bad.body).toEqual(LOGIN_FAILED);
      }
      expect(await loginAttempts(user.phone)).toEqual([{ attempts: 5, live: false }]);
      const good = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: user.password,
      });
      expect(good.status).toBe(401);
      expect(good.body).toEqual(LOGIN_FAILED);
      const [sessions] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from private.sessions where user_id = ${user.id}`;
      expect(sessions?.n).toBe(1); // only the signup session
    });

    it('concurrent wrong passwords on one code never record more than 5 tries', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      const results = await Promise.all(
        Array.from(
          { length: 12 },
          (_, i) =>
            post(authVerify, {
              phone: user.phone,
              otp_code: code,
              context: 'login',
              password: `wrong password ${i}`,
            }),
        ),
      );
      for (const r of results) expect(r.body).toEqual(LOGIN_FAILED);
      const rows = await loginAttempts(user.phone);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.attempts).toBe(5);
      expect(rows[0]?.live).toBe(false);
    });

    it('the right code and password presented 5 times at once open exactly one session', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      const results = await Promise.all(
        Array.from(
          { length: 5 },
          () => post(authVerify, { phone: user.phone, otp_code: code, context: 'login', password: user.password }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
      for (const r of results.filter((x) => x.status === 401)) expect(r.body).toEqual(LOGIN_FAILED);
      const [sessions] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from private.sessions where user_id = ${user.id}`;
      expect(sessions?.n).toBe(2); // signup + exactly one login
    });

    it('missing password with context login -> 400 on password', async () => {
      const user = await signUp();
      const code = await loginCode(user.phone);
      const res = await post(authVerify, { phone: user.phone, otp_code: code, context: 'login' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        status: 400,
        code: 'validation_failed',
        error: 'Validation failed',
        details: [{ field: 'password', message: 'is required when context is login' }],
      });
      // validation happens before the code is looked at: the code is untouched
      expect(await loginAttempts(user.phone)).toEqual([{ attempts: 0, live: true }]);
      const empty = await post(authVerify, { phone: user.phone, otp_code: code, context: 'login', password: '' });
      expect(empty.status).toBe(400);
      expect(fieldsOf(empty)).toEqual(['password']);
      const long = await post(authVerify, {
        phone: user.phone,
        otp_code: code,
        context: 'login',
        password: 'p'.repeat(129),
      });
      expect(long.status).toBe(400);
      expect(fieldsOf(long)).toEqual(['password']);
      expect(await loginAttempts(user.phone)).toEqual([{ attempts: 0, live: true }]);
    });

    it('a password with context signup -> 400 on password', async () => {
      const { e164 } = newPhone();
      expect((await post(authSendOtp, { phone: e164, context: 'signup' })).status).toBe(200);
      const code = await lastOtp(e164);
      const res = await post(authVerify, {
        phone: e164,
        otp_code: code,
        context: 'signup',
        password: 'a sound passphrase',
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        status: 400,
        code: 'validation_failed',
        error: 'Validation failed',
        details: [{ field: 'password', message: 'is only accepted when context is login' }],
      });
      // the code was not spent
      expect((await post(authVerify, { phone: e164, otp_code: code, context: 'signup' })).status).toBe(200);
    });

    it('logging in twice gives two independent sessions', async () => {
      const user: TestUser = await signUp();
      const first = await post(authVerify, {
        phone: user.phone,
        otp_code: await loginCode(user.phone),
        context: 'login',
        password: user.password,
      });
      const second = await post(authVerify, {
        phone: user.phone,
        otp_code: await loginCode(user.phone),
        context: 'login',
        password: user.password,
      });
      expectSession(first, user);
      expectSession(second, user);
      expect(first.body.data.session.refresh_token).not.toBe(second.body.data.session.refresh_token);
      const [sessions] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.sessions where user_id = ${user.id} and revoked_at is null`;
      expect(sessions?.n).toBe(3);
    });
  });
});
