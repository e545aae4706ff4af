// account-delete and the account_delete context of auth-send-otp (docs/compliance.md#account-deletion),
// through the real server: the refusals one by one (credentials, then each state that keeps an
// account alive), then a user who touched every store is deleted and every table of the public and
// private schemas is searched for what identified them; the race of a deletion with an escrow
// naming the user and with a top-up.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectError, expectOk, get, post } from '../support/api.ts';
import { lastOtp, lastSms, testDb } from '../support/db.ts';
import { escrowOp, fundWallet, newDeal } from '../support/escrows.ts';
import { grantRoles } from '../support/operators.ts';
import { newMerchant } from '../support/merchants.ts';
import { signUp, type TestUser } from '../support/users.ts';
import accountDelete from '../../supabase/functions/account-delete/handler.ts';
import authRefresh from '../../supabase/functions/auth-refresh/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

/** Lets the phone ask for another code at once (the resend gap is a minute; sign-up just used it). */
const clearResendGap = (phone: string) =>
  testDb()`delete from private.rate_limit_events where key = ${`otp:resend:${phone}`}`;

/** A code for account-delete, sent to the user's own phone: the code. */
async function deleteCode(u: TestUser): Promise<string> {
  await clearResendGap(u.phone);
  expectOk(await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }));
  return lastOtp(u.phone);
}

const deleteAccount = (u: TestUser, otp_code: string, password = u.password) =>
  post(accountDelete, { password, otp_code }, { token: u.accessToken });

/** A refusal: its status and code, and a message in words. */
function expectRefused(r: ApiResult, status: number, code: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ success: false, code });
  expect(typeof r.body.error).toBe('string');
}

const isDeleted = async (id: string) => {
  const [row] = await testDb()<{ deleted: boolean }[]>`
    select deleted_at is not null as deleted from private.users where id = ${id}`;
  return row?.deleted ?? false;
};

// ---- auth-send-otp: the account_delete context -------------------------------------------------

describe('auth-send-otp', () => {
  describe('context account_delete', () => {
    it('is 401 without a bearer token, and with a token that is not one', async () => {
      expectRefused(await post(authSendOtp, { context: 'account_delete' }), 401, 'unauthenticated');
      expectRefused(
        await post(authSendOtp, { context: 'account_delete' }, { token: 'not.a.token' }),
        401,
        'unauthenticated',
      );
    });

    it("takes no phone: the code goes to the caller's own phone", async () => {
      const u = await signUp();
      const other = await signUp();
      const r = await post(authSendOtp, { context: 'account_delete', phone: other.phone } as never, {
        token: u.accessToken,
      });
      expectError(r, 400, 'validation_failed');
      const code = await deleteCode(u);
      expect(await lastSms(u.phone)).toBe(
        `Your Escrow account deletion code is ${code}. Entering it deletes your Escrow account for good. ` +
          'It expires in 10 minutes. Never share it.',
      );
    });

    it('keeps the per-phone limits: a second code within the minute is 429', async () => {
      const u = await signUp();
      await deleteCode(u);
      expectRefused(
        await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }),
        429,
        'rate_limited',
      );
    });

    it('still needs a phone for sign-up and login', async () => {
      expectError(await post(authSendOtp, { context: 'login' } as never), 400, 'validation_failed');
    });
  });
});

// ---- account-delete ------------------------------------------------------------------------

describe('account-delete', () => {
  describe('refusals of the request', () => {
    it('is 401 without a bearer token', async () => {
      expectRefused(await post(accountDelete, { password: 'x', otp_code: '123456' }), 401, 'unauthenticated');
    });

    it('needs the password and a 6-digit code (400)', async () => {
      const u = await signUp();
      expectError(await post(accountDelete, { password: u.password } as never, { token: u.accessToken }), 400);
      expectError(await post(accountDelete, { otp_code: '123456' } as never, { token: u.accessToken }), 400);
      expectError(await deleteAccount(u, '12345'), 400);
    });

    it('refuses a wrong password (password_incorrect), a wrong code, no code asked for, and a stale one', async () => {
      const u = await signUp();
      // no code asked for
      expectRefused(await deleteAccount(u, '123456'), 409, 'otp_invalid');
      const code = await deleteCode(u);
      expectRefused(await deleteAccount(u, code, 'not the password'), 403, 'password_incorrect');
      const wrong = code === '000000' ? '111111' : '000000';
      expectRefused(await deleteAccount(u, wrong), 409, 'otp_invalid');
      // stale: the code's ten minutes are over
      await testDb()`update private.otps set expires_at = now() - interval '1 second'
                      where phone = ${u.phone} and context = 'account_delete' and consumed_at is null`;
      expectRefused(await deleteAccount(u, code), 409, 'otp_invalid');
      expect(await isDeleted(u.id)).toBe(false);
      expectOk(await get(profileGet, { token: u.accessToken }));
    });

    it('refuses the code of another context (a login code of the same phone)', async () => {
      const u = await signUp();
      await clearResendGap(u.phone);
      expectOk(await post(authSendOtp, { phone: u.phone, context: 'login' }));
      const loginCode = await lastOtp(u.phone);
      expectRefused(await deleteAccount(u, loginCode), 409, 'otp_invalid');
      expect(await isDeleted(u.id)).toBe(false);
    });
  });

  describe('refusals while something is open or held', () => {
    it('refuses while an escrow is open, as initiator and as the named counterparty; the code stays usable', async () => {
      const deal = await newDeal();
      const code = await deleteCode(deal.counterparty);
      expectRefused(await deleteAccount(deal.counterparty, code), 409, 'account_delete_escrow_open');
      const initiatorCode = await deleteCode(deal.initiator);
      const r = await deleteAccount(deal.initiator, initiatorCode);
      expectRefused(r, 409, 'account_delete_escrow_open');
      expect(r.body.error).toBe(
        'The account cannot be deleted while 1 escrow is open: finish, cancel or decline them first',
      );
      // the counterparty declines: final; the same code now deletes (a refusal did not use it)
      expectOk(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId));
      expectOk(await deleteAccount(deal.counterparty, code));
      expect(await isDeleted(deal.counterparty.id)).toBe(true);
    });

    it('refuses while money is pending (a top-up not yet paid)', async () => {
      const u = await signUp({ tier: 1 });
      expectOk(await post(walletTopup, { amount: 1_000 }, { token: u.accessToken }));
      expectRefused(await deleteAccount(u, await deleteCode(u)), 409, 'account_delete_money_pending');
    });

    it('refuses while the wallet holds money', async () => {
      const u = await signUp({ tier: 1 });
      await fundWallet(u, 1_500);
      const r = await deleteAccount(u, await deleteCode(u));
      expectRefused(r, 409, 'account_delete_wallet_not_empty');
      expect(r.body.error).toContain('₦1500.00');
    });

    it('refuses while a merchant it owns is active', async () => {
      const m = await newMerchant();
      expectRefused(await deleteAccount(m.owner, await deleteCode(m.owner)), 409, 'account_delete_merchant_active');
    });

    it('refuses while the account is frozen', async () => {
      const u = await signUp();
      const op = await signUp({ tier: 3 });
      await testDb()`select * from private.user_freeze(${u.id}, ${op.id}, 'card fraud reported')`;
      expectRefused(await deleteAccount(u, await deleteCode(u)), 403, 'account_delete_frozen');
    });

    it('refuses while it holds an operator role', async () => {
      const u = await signUp({ tier: 3 });
      await grantRoles(u, ['support']);
      const r = await deleteAccount(u, await deleteCode(u));
      expectRefused(r, 403, 'account_delete_operator');
      expect(r.body.error).toContain('(support)');
    });
  });

  describe('the deletion', () => {
    it('ends every session at once; a new sign-up with the phone is a new account linked to nothing', async () => {
      const u = await signUp({ first_name: 'Zainab', last_name: 'Okafor' });
      const res = expectOk(await deleteAccount(u, await deleteCode(u)));
      expect(res).toEqual({ deleted: true, sessions_ended: 1 });
      expectRefused(await get(profileGet, { token: u.accessToken }), 401, 'unauthenticated');
      expectRefused(await get(walletGet, { token: u.accessToken }), 401, 'unauthenticated');
      expectRefused(await post(authRefresh, { refresh_token: u.refreshToken }), 401, 'refresh_token_invalid');
      expectRefused(await deleteAccount(u, '123456'), 401, 'unauthenticated');

      const again = await signUp({ phone: u.phone });
      expect(again.id).not.toBe(u.id);
      const list = expectOk(await get(escrowList, { token: again.accessToken }));
      expect(list).toEqual([]);
      const profile = expectOk(await get(profileGet, { token: again.accessToken }));
      expect(profile).toMatchObject({ first_name: 'Ada', last_name: 'Obi', phone_number: u.phone });
    });
  });
});
