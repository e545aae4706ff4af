// auth-forgot-password and auth-reset-password: no account enumeration, code checks, validation,
// and a successful reset revoking every session of the user and changing the password.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectOtpCodeRejected, fieldsOf, get, post } from '../support/api.ts';
import { lastOtp, lastSms, smsCount, testDb } from '../support/db.ts';
import { newPhone, signUp, type TestUser } from '../support/users.ts';
import authForgotPassword from '../../supabase/functions/auth-forgot-password/handler.ts';
import authRefresh from '../../supabase/functions/auth-refresh/handler.ts';
import authResetPassword from '../../supabase/functions/auth-reset-password/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';

/** Moves the last send of phone more than 60 s into the past, so another code may be sent. */
async function passResendGap(e164: string): Promise<void> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${e164}`}`;
}

const otherCode = (code: string, n = 1) => String((Number(code) + n) % 1_000_000).padStart(6, '0');

/** Asks for a reset code for a user's phone and returns it. */
async function resetCode(phone: string): Promise<string> {
  await passResendGap(phone);
  const res = await post(authForgotPassword, { phone });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return lastOtp(phone);
}

/** Tries a full login (code + password); returns the auth-verify answer. */
async function tryLogin(phone: string, password: string): Promise<ApiResult> {
  await passResendGap(phone);
  expect((await post(authSendOtp, { phone, context: 'login' })).status).toBe(200);
  return post(authVerify, { phone, otp_code: await lastOtp(phone), context: 'login', password });
}

const SENT = { success: true, status: 200, data: { sent: true, expires_in: 600 } };
const NEW_PASSWORD = 'a brand new passphrase';

describe('auth-forgot-password', () => {
  it('a known phone gets an SMS with a 6-digit code (200)', async () => {
    const user = await signUp();
    await passResendGap(user.phone);
    const before = await smsCount(user.phone);
    const res = await post(authForgotPassword, { phone: user.phone });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(SENT);
    expect(await smsCount(user.phone)).toBe(before + 1);
    expect(await lastSms(user.phone)).toMatch(/\b[0-9]{6}\b/);
    expect(await lastOtp(user.phone)).toMatch(/^[0-9]{6}$/);
    const [otp] = await testDb()<{ context: string }[]>`
      select context from private.otps where phone = ${user.phone} order by created_at desc limit 1`;
    expect(otp?.context).toBe('reset');
  });

  it('accepts the local format', async () => {
    const user = await signUp();
    await passResendGap(user.phone);
    const res = await post(authForgotPassword, { phone: `0${user.phone.slice(4)}` });
    expect(res.body).toEqual(SENT);
    expect(await lastOtp(user.phone)).toMatch(/^[0-9]{6}$/);
  });

  it('an unknown phone gets the same 200 body and no SMS', async () => {
    const user = await signUp();
    await passResendGap(user.phone);
    const known = await post(authForgotPassword, { phone: user.phone });
    const { local, e164 } = newPhone();
    const unknown = await post(authForgotPassword, { phone: local });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual(known.body);
    expect(await smsCount(e164)).toBe(0);
    // rate limited the same way as a known phone
    const knownAgain = await post(authForgotPassword, { phone: user.phone });
    const unknownAgain = await post(authForgotPassword, { phone: e164 });
    expect(knownAgain.status).toBe(429);
    expect(knownAgain.body.code).toBe('rate_limited');
    expect(unknownAgain.status).toBe(429);
    expect(unknownAgain.body).toEqual(knownAgain.body);
    expect(Number(unknownAgain.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(unknownAgain.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it('validates the body', async () => {
    const bad = await post(authForgotPassword, { phone: '0801234' });
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad)).toEqual(['phone']);
    // @ts-expect-error a body missing its field, on purpose
    const empty = await post(authForgotPassword, {});
    expect(empty.body.details).toEqual([{ field: 'phone', message: 'is required' }]);
    // @ts-expect-error an unknown field, on purpose
    const extra = await post(authForgotPassword, { phone: newPhone().e164, context: 'reset' });
    expect(extra.status).toBe(400);
    expect(fieldsOf(extra)).toEqual(['context']);
  });
});

describe('auth-reset-password', () => {
  it('confirm_password mismatch -> 400 on confirm_password, and the code is not spent', async () => {
    const user = await signUp();
    const code = await resetCode(user.phone);
    const res = await post(authResetPassword, {
      phone: user.phone,
      otp_code: code,
      password: NEW_PASSWORD,
      confirm_password: `${NEW_PASSWORD}!`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      status: 400,
      code: 'validation_failed',
      error: 'Validation failed',
      details: [{ field: 'confirm_password', message: 'must match password' }],
    });
    const ok = await post(authResetPassword, {
      phone: user.phone,
      otp_code: code,
      password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('a wrong code -> 409 otp_invalid and nothing changes', async () => {
    const user = await signUp();
    const code = await resetCode(user.phone);
    const res = await post(authResetPassword, {
      phone: user.phone,
      otp_code: otherCode(code),
      password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    });
    expectOtpCodeRejected(res);
    expect((await get(profileGet, { token: user.accessToken })).status).toBe(200);
    const login = await tryLogin(user.phone, user.password);
    expect(login.status).toBe(200);
  });

  it('5 wrong codes burn the reset code', async () => {
    const user = await signUp();
    const code = await resetCode(user.phone);
    for (let i = 1; i <= 5; i++) {
      expectOtpCodeRejected(
        await post(authResetPassword, {
          phone: user.phone,
          otp_code: otherCode(code, i),
          password: NEW_PASSWORD,
          confirm_password: NEW_PASSWORD,
        }),
      );
    }
    expectOtpCodeRejected(
      await post(authResetPassword, {
        phone: user.phone,
        otp_code: code,
        password: NEW_PASSWORD,
        confirm_password: NEW_PASSWORD,
      }),
    );
  });

  it('an expired code -> 409 otp_invalid', async () => {
    const user = await signUp();
    const code = await resetCode(user.phone);
    await testDb()`update private.otps set expires_at = now() - interval '1 second' where phone = ${user.phone} and context = 'reset'`;
    expectOtpCodeRejected(
      await post(authResetPassword, {
        phone: user.phone,
        otp_code: code,
        password: NEW_PASSWORD,
        confirm_password: NEW_PASSWORD,
      }),
    );
  });

  it('a reset code is bound to its context: a login code does not reset, a reset code does not log in', async () => {
    const user = await signUp();
    const reset = await resetCode(user.phone);
    await passResendGap(user.phone);
    expect((await post(authSendOtp, { phone: user.phone, context: 'login' })).status).toBe(200);
    const login = await lastOtp(user.phone);
    if (login !== reset) {
      expectOtpCodeRejected(
        await post(authResetPassword, {
          phone: user.phone,
          otp_code: login,
          password: NEW_PASSWORD,
          confirm_password: NEW_PASSWORD,
        }),
      );
      const asLogin = await post(authVerify, {
        phone: user.phone,
        otp_code: reset,
        context: 'login',
        password: user.password,
      });
      expect(asLogin.status).toBe(401);
    }
    // a signup code (phone without account) does not reset either
    const { e164 } = newPhone();
    expect((await post(authSendOtp, { phone: e164, context: 'signup' })).status).toBe(200);
    expectOtpCodeRejected(
      await post(authResetPassword, {
        phone: e164,
        otp_code: await lastOtp(e164),
        password: NEW_PASSWORD,
        confirm_password: NEW_PASSWORD,
      }),
    );
  });

  it('an unknown phone cannot be reset (409 otp_invalid)', async () => {
    const { e164 } = newPhone();
    expect((await post(authForgotPassword, { phone: e164 })).status).toBe(200);
    expectOtpCodeRejected(
      await post(authResetPassword, {
        phone: e164,
        otp_code: '123456',
        password: NEW_PASSWORD,
        confirm_password: NEW_PASSWORD,
      }),
    );
    const [user] = await testDb()`select 1 from private.users where phone = ${e164}`;
    expect(user).toBeUndefined();
  });

  it('success: 200, every session of the user is revoked, the old password fails and the new one works', async () => {
    const user: TestUser = await signUp();
    // a second session: a login on another device
    const second = await tryLogin(user.phone, user.password);
    expect(second.status).toBe(200);
    const secondAccess: string = second.body.data.session.access_token;
    const secondRefresh: string = second.body.data.session.refresh_token;
    expect((await get(profileGet, { token: secondAccess })).status).toBe(200);
    // someone else's session must not be touched
    const bystander = await signUp();

    const code = await resetCode(user.phone);
    const res = await post(authResetPassword, {
      phone: `0${user.phone.slice(4)}`,
      otp_code: code,
      password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ success: true, status: 200, data: { password_reset: true } });

    for (const token of [user.accessToken, secondAccess]) {
      const r = await get(profileGet, { token });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ success: false, status: 401 });
    }
    for (const token of [user.refreshToken, secondRefresh]) {
      const r = await post(authRefresh, { refresh_token: token });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ success: false, status: 401 });
    }
    const sessions = await testDb()<{ reason: string | null }[]>`
      select revoked_reason as reason from private.sessions where user_id = ${user.id}`;
    expect(sessions.map((s) => s.reason)).toEqual(['password_reset', 'password_reset']);

    // the code is single use
    expectOtpCodeRejected(
      await post(authResetPassword, {
        phone: user.phone,
        otp_code: code,
        password: 'yet another passphrase',
        confirm_password: 'yet another passphrase',
      }),
    );

    const oldPassword = await tryLogin(user.phone, user.password);
    expect(oldPassword.status).toBe(401);
    expect(oldPassword.body).toEqual({
      success: false,
      status: 401,
      code: 'login_failed',
      error: 'Invalid phone number, code or password',
    });
    const newPassword = await tryLogin(user.phone, NEW_PASSWORD);
    expect(newPassword.status, JSON.stringify(newPassword.body)).toBe(200);
    expect(newPassword.body.data.user).toEqual({ id: user.id, phone: user.phone });
    expect((await get(profileGet, { token: newPassword.body.data.session.access_token })).status).toBe(200);

    expect((await get(profileGet, { token: bystander.accessToken })).status).toBe(200);
  });

  it('password bounds: 7 and 129 characters -> 400 on password; 8 and 128 are accepted', async () => {
    for (const len of [7, 129]) {
      const p = 'p'.repeat(len);
      const res = await post(authResetPassword, {
        phone: newPhone().e164,
        otp_code: '123456',
        password: p,
        confirm_password: p,
      });
      expect(res.status, `length ${len}`).toBe(400);
      expect(fieldsOf(res), `length ${len}`).toEqual(['password']);
    }
    for (const len of [8, 128]) {
      const user = await signUp();
      const p = 'q'.repeat(len);
      const code = await resetCode(user.phone);
      const res = await post(authResetPassword, {
        phone: user.phone,
        otp_code: code,
        password: p,
        confirm_password: p,
      });
      expect(res.status, `length ${len}: ${JSON.stringify(res.body)}`).toBe(200);
      expect((await tryLogin(user.phone, p)).status, `login with length ${len}`).toBe(200);
    }
  });

  it('validates every field with details', async () => {
    // @ts-expect-error every field malformed, a number among them
    const res = await post(authResetPassword, {
      phone: '+234',
      otp_code: '12',
      password: 'short',
      confirm_password: 5,
      extra: 1,
    });
    expect(res.status).toBe(400);
    expect(fieldsOf(res)).toEqual(['confirm_password', 'extra', 'otp_code', 'password', 'phone']);
    // @ts-expect-error a body missing every field, on purpose
    const empty = await post(authResetPassword, {});
    expect(empty.status).toBe(400);
    expect(fieldsOf(empty)).toEqual(['confirm_password', 'otp_code', 'password', 'phone']);
  });
});
