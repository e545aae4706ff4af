import { describe, expect, it } from 'vitest';
import { fieldsOf, get, post } from '../support/api.ts';
import { lastOtp, smsCount, testDb } from '../support/db.ts';
import { newPhone, signUp, verifyPhone } from '../support/users.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';

describe('auth-signup', () => {
  describe('signup flow: auth-send-otp -> auth-verify (signup) -> auth-signup', () => {
    it('creates the account and profile and returns a working session (201)', async () => {
      const { local, e164 } = newPhone();
      const sent = await post(authSendOtp, { phone: local, context: 'signup' });
      expect(sent.status).toBe(200);
      expect(sent.body).toEqual({
        success: true,
        status: 200,
        data: { sent: true, expires_in: 600, resend_after: 60 },
      });

      const code = await lastOtp(e164);
      const verified = await post(authVerify, { phone: local, context: 'signup', otp_code: code });
      expect(verified.status).toBe(200);
      expect(verified.body.data).toEqual({ verified: true, expires_in: 1800 });

      const res = await post(authSignup, {
        phone: local,
        first_name: 'Chioma',
        last_name: 'Eze',
        password: 'long enough',
      });
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      expect(res.body.status).toBe(201);
      const { user, session } = res.body.data;
      expect(user.phone).toBe(e164);
      expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(session.token_type).toBe('bearer');
      expect(session.expires_in).toBe(3600);
      expect(typeof session.refresh_token).toBe('string');

      const profile = await get(profileGet, { token: session.access_token });
      expect(profile.status).toBe(200);
      expect(profile.body.data).toMatchObject({
        id: user.id,
        first_name: 'Chioma',
        last_name: 'Eze',
        phone_number: e164,
      });
    });

    it('refuses signup for a phone that was never verified (409 phone_not_verified, on phone)', async () => {
      const { e164 } = newPhone();
      const res = await post(authSignup, { phone: e164, first_name: 'A', last_name: 'B', password: 'long enough' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('phone_not_verified');
      expect(res.body.error).toBe('This phone number has not been verified for sign-up');
      expect(fieldsOf(res)).toEqual(['phone']);
    });

    it('refuses a sign-up while another for the same phone holds its verification (409 signup_in_progress)', async () => {
      const { e164 } = newPhone();
      await testDb()`insert into private.phone_verifications (phone, expires_at, claimed_until)
                     values (${e164}, now() + interval '5 minutes', now() + interval '30 seconds')`;
      const res = await post(authSignup, { phone: e164, first_name: 'A', last_name: 'B', password: 'long enough' });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toEqual({
        success: false,
        status: 409,
        code: 'signup_in_progress',
        error: 'A sign-up for this phone number is already in progress',
        details: [{ field: 'phone', message: 'is being signed up by another request; try again in a moment' }],
      });
    });

    it('refuses a second account for the same phone (409) and does not send a signup code to it', async () => {
      const user = await signUp();
      const before = await smsCount(user.phone);
      await testDb()`delete from private.rate_limit_events where key like ${`otp:%:${user.phone}`}`;
      const again = await post(authSendOtp, { phone: user.phone, context: 'signup' });
      expect(again.status).toBe(200); // same answer as for a new phone
      expect(await smsCount(user.phone)).toBe(before + 1);
      expect(await lastOtp(user.phone).catch(() => 'no code')).toBe('no code');
    });

    it('a verified phone that already has an account gets 409 on signup', async () => {
      const user = await signUp();
      await testDb()`insert into private.phone_verifications (phone, expires_at) values (${user.phone}, now() + interval '5 minutes')`;
      const res = await post(authSignup, {
        phone: user.phone,
        first_name: 'A',
        last_name: 'B',
        password: 'long enough',
      });
      expect(res.status).toBe(409);
      expect(fieldsOf(res)).toEqual(['phone']);
    });

    it('a verified phone that already has an account gets 409 again on a retry (a failed sign-up frees its claim)', async () => {
      const user = await signUp();
      await testDb()`insert into private.phone_verifications (phone, expires_at) values (${user.phone}, now() + interval '5 minutes')`;
      for (let i = 0; i < 2; i++) {
        const res = await post(authSignup, {
          phone: user.phone,
          first_name: 'A',
          last_name: 'B',
          password: 'long enough',
        });
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('account_exists');
        expect(res.body.details).toEqual([{
          field: 'phone',
          message: 'already has an account; log in or reset the password',
        }]);
      }
    });

    it('10 sign-ups at once for one verified phone: one account, one 201; the others 409 while it hashes, or 400 after', async () => {
      const { e164 } = newPhone();
      await verifyPhone(e164);
      const results = await Promise.all(
        Array.from(
          { length: 10 },
          () => post(authSignup, { phone: e164, first_name: 'A', last_name: 'B', password: 'long enough' }),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 201)) {
        expect([400, 409]).toContain(r.status);
        expect(fieldsOf(r)).toEqual(['phone']);
      }
      // at least the ones that arrived while the first was hashing were turned away without a hash
      expect(statuses.filter((s) => s === 409).length).toBeGreaterThan(0);
      const [n] = await testDb()<{ n: number }[]>`select count(*)::int as n from private.users where phone = ${e164}`;
      expect(n?.n).toBe(1);
    });

    it('validates every field with details', async () => {
      // @ts-expect-error every field malformed and an unknown one, on purpose
      const res = await post(authSignup, {
        phone: '+23480',
        first_name: '',
        last_name: 'x'.repeat(101),
        password: 'short',
        extra: 1,
      });
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toEqual(['extra', 'first_name', 'last_name', 'password', 'phone']);
      // @ts-expect-error a body missing every field, on purpose
      const empty = await post(authSignup, {});
      expect(fieldsOf(empty)).toEqual(['first_name', 'last_name', 'password', 'phone']);
      expect(empty.body.details.find((d) => d.field === 'phone')!.message).toBe('is required');
    });

    it('accepts passwords of 8 and 128 characters and refuses 7 and 129', async () => {
      for (const [len, ok] of [[7, false], [8, true], [128, true], [129, false]] as const) {
        const { e164 } = newPhone();
        if (ok) await verifyPhone(e164);
        const res = await post(authSignup, {
          phone: e164,
          first_name: 'A',
          last_name: 'B',
          password: 'p'.repeat(len),
        });
        expect(res.status, `length ${len}`).toBe(ok ? 201 : 400);
      }
    });
  });
});
