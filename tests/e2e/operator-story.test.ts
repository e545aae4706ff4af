// An operator's first day, through the real server and the real grant script: an employee's
// account (KYC tier 3, NIN and BVN bound) is made the first admin by `npm run operator:grant`; they
// sign in as every user does (an SMS code and the password), are held at 401 until the second
// factor, enrol it (the otpauth URI and its QR code, once), pass it with the code of the moment,
// and work: the queues, a search by a customer's 0-prefixed phone, the customer's picture. A second
// sign-in on another device is a session of its own and must pass the factor again. Every step
// lands in the audit.
import { describe, expect, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { bindIdentity, codeAt, operatorScript, secretOf } from '../support/operators.ts';
import { signUp, type TestUser } from '../support/users.ts';

/** Signs in as the README's first session does: a login code by SMS, then the code and the password. */
async function signIn(user: TestUser): Promise<string> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${user.phone}`}`;
  expect((await post('auth-send-otp', { phone: user.phone, context: 'login' })).status).toBe(200);
  const res = await post('auth-verify', {
    phone: user.phone,
    context: 'login',
    otp_code: await lastOtp(user.phone),
    password: user.password,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.session.access_token as string;
}

describe('an operator signs in', () => {
  it('granted by the script, held at 401 until TOTP, then works; a second device passes on its own', async () => {
    const employee = await signUp({ first_name: 'Chiamaka', last_name: 'Obi', tier: 3 });
    await bindIdentity(employee.id);
    const granted = await operatorScript('grant', [`0${employee.phone.slice(4)}`, 'admin']);
    expect(granted.code, granted.stderr).toBe(0);
    await operatorScript('grant', [employee.phone, 'support']);

    const token = await signIn(employee);
    const early = await get('admin-queue-list', { token });
    expect([early.status, early.body.code]).toEqual([401, 'second_factor_required']);

    const enrolled = await post('admin-totp-enrol', undefined, { token });
    expect(enrolled.status).toBe(200);
    expect(enrolled.body.data.otpauth_uri).toMatch(/^otpauth:\/\/totp\/.+\?.*secret=[A-Z2-7]+/);
    expect(enrolled.body.data.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    const secret = secretOf(enrolled.body.data.otpauth_uri);
    const passed = await post('admin-totp-verify', { code: await codeAt(secret) }, { token });
    expect(passed.status, JSON.stringify(passed.body)).toBe(200);
    // the secret is shown once: the factor is active, enrolment is refused
    const again = await post('admin-totp-enrol', undefined, { token });
    expect([again.status, again.body.code]).toEqual([409, 'totp_already_active']);

    const queues = await get('admin-queue-list', { token });
    expect(queues.status).toBe(200);
    const customer = await signUp({ first_name: 'Emeka', last_name: 'Nwosu' });
    const found = await get('admin-search', { token, query: { q: `0${customer.phone.slice(4)}` } });
    expect(found.status).toBe(200);
    expect(found.body.data.users.map((u: { id: string }) => u.id)).toEqual([customer.id]);
    const picture = await get('admin-user-get', {
      token,
      query: { user_id: customer.id, reason: 'The customer called about a payout.' },
    });
    expect(picture.status).toBe(200);

    // another device: a new session with no pass, until the code of the next step
    const laptop = await signIn(employee);
    const held = await get('admin-queue-list', { token: laptop });
    expect([held.status, held.body.code]).toEqual([401, 'second_factor_required']);
    expect((await post('admin-totp-verify', { code: await codeAt(secret, 1) }, { token: laptop })).status).toBe(200);
    expect((await get('admin-queue-list', { token: laptop })).status).toBe(200);

    const audit = await testDb()<{ action: string; target_id: string | null; reason: string | null }[]>`
      select action, target_id, reason from private.admin_audit where admin_id = ${employee.id} order by id`;
    expect(audit.map((a) => a.action)).toEqual(['operator.grant', 'operator.grant', 'user.search', 'user.read']);
    expect(audit[3]).toMatchObject({ target_id: customer.id, reason: 'The customer called about a payout.' });
  });
});
