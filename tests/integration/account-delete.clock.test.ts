// account-delete's deactivation of the dedicated account, when the provider failed it at the
// deletion (docs/compliance.md#account-deletion): the open operator flag it left is retried by the
// job once its last try is an hour old, resolved when the provider accepts, counted again when it
// fails. The provider's failure is an outage of the Paystack fake for the moment of the deletion
// (a clock suite runs alone, so no other suite's call meets it).
import { describe, expect, it } from 'vitest';
import { expectOk, post } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { customerEmailOf, paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import accountDelete from '../../supabase/functions/account-delete/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';

/** Deletes the account through account-delete (the provider up). */
async function deleted(u: TestUser) {
  await testDb()`delete from private.rate_limit_events where key = ${`otp:resend:${u.phone}`}`;
  expectOk(await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }));
  const otp_code = await lastOtp(u.phone);
  expectOk(await post(accountDelete, { password: u.password, otp_code }, { token: u.accessToken }));
}

/** A user with a dedicated account assigned by the provider: the user and the provider's id of it. */
async function withDedicatedAccount(): Promise<{ u: TestUser; providerId: string }> {
  const u = await signUp({ tier: 1 });
  expectOk(await post(virtualAccountCreate, {}, { token: u.accessToken }));
  await paystack.assignOutcome(customerEmailOf(u.id), true);
  const [va] = await testDb()<{ provider_account_id: string }[]>`
    select provider_account_id from public.virtual_accounts where user_id = ${u.id}`;
  expect(va?.provider_account_id).toMatch(/^\d+$/);
  return { u, providerId: va!.provider_account_id };
}

/** Deletes the account while the provider is down: the deactivation fails and is flagged. */
async function deletedWhileProviderDown(u: TestUser) {
  await testDb()`delete from private.rate_limit_events where key = ${`otp:resend:${u.phone}`}`;
  expectOk(await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }));
  const otp_code = await lastOtp(u.phone);
  await paystack.outage('unavailable', 30);
  try {
    expectOk(await post(accountDelete, { password: u.password, otp_code }, { token: u.accessToken }));
    await expect.poll(async () => (await flagOf(u.id))?.attempts ?? 0, { timeout: 10_000 }).toBe(1);
  } finally {
    await paystack.outage('none');
  }
}

const flagOf = async (userId: string) =>
  (await testDb()<{ attempts: number; resolved: boolean }[]>`
    select (details ->> 'attempts')::int as attempts, resolved_at is not null as resolved from private.operator_flags
     where kind = 'dedicated_account_deactivation_failed' and user_id = ${userId}`)[0];

/** Makes the flag's last try `hours` old. */
const ageFlag = (userId: string, hours: number) =>
  testDb()`
    update private.operator_flags
       set details = details || jsonb_build_object('last_attempt_at', now() - make_interval(hours => ${hours}))
     where kind = 'dedicated_account_deactivation_failed' and user_id = ${userId}`;

describe('jobs-run', () => {
  describe("retrying a deleted account's deactivation", () => {
    it('asks the provider again an hour after the failure, no sooner; a success resolves the flag', async () => {
      const { u, providerId } = await withDedicatedAccount();
      await deletedWhileProviderDown(u);
      const asked = async () => (await paystack.requests(`/dedicated_account/${providerId}`)).length;
      const before = await asked();

      expectOk(await runJobs(new Date().toISOString()));
      expect(await asked()).toBe(before);
      expect(await flagOf(u.id)).toEqual({ attempts: 1, resolved: false });

      await ageFlag(u.id, 2);
      const run = expectOk(await runJobs(new Date().toISOString()));
      expect(await asked()).toBe(before + 1);
      expect(run.dedicated_accounts_deactivated).toBeGreaterThanOrEqual(1);
      expect(await flagOf(u.id)).toEqual({ attempts: 1, resolved: true });
      // resolved: never asked again
      await ageFlag(u.id, 2);
      expectOk(await runJobs(new Date().toISOString()));
      expect(await asked()).toBe(before + 1);
    });

    it('a retry the provider fails again counts another attempt and leaves the flag open', async () => {
      const { u, providerId } = await withDedicatedAccount();
      await deletedWhileProviderDown(u);
      await ageFlag(u.id, 2);
      await paystack.outage('unavailable', 30);
      try {
        expectOk(await runJobs(new Date().toISOString()));
      } finally {
        await paystack.outage('none');
      }
      expect(await flagOf(u.id)).toEqual({ attempts: 2, resolved: false });
      expect((await paystack.requests(`/dedicated_account/${providerId}`)).length).toBeGreaterThanOrEqual(2);
    });

    it('a deactivation a crash lost after the deletion committed is asked by the job once the flag waited', async () => {
      const { u, providerId } = await withDedicatedAccount();
      await deleted(u);
      await expect.poll(async () => (await flagOf(u.id))?.resolved).toBe(true);
      // as a crash between the commit and the call leaves it: the deletion's flag open, never tried
      await testDb()`
        update private.operator_flags set resolved_at = null, details = details - 'resolved_by'
         where kind = 'dedicated_account_deactivation_failed' and user_id = ${u.id}`;
      const asked = async () => (await paystack.requests(`/dedicated_account/${providerId}`)).length;
      const before = await asked();
      expectOk(await runJobs(new Date().toISOString()));
      expect(await asked()).toBe(before);
      await ageFlag(u.id, 2);
      expectOk(await runJobs(new Date().toISOString()));
      expect(await asked()).toBe(before + 1);
      expect(await flagOf(u.id)).toEqual({ attempts: 0, resolved: true });
    });

    it('a dedicated account the provider assigned after the deletion is deactivated at the next run', async () => {
      const u = await signUp({ tier: 1 });
      expectOk(await post(virtualAccountCreate, {}, { token: u.accessToken }));
      await deleted(u);
      await paystack.assignOutcome(customerEmailOf(u.id), true);
      const [va] = await testDb()<{ provider_account_id: string }[]>`
        select provider_account_id from public.virtual_accounts where user_id = ${u.id}`;
      expect(await flagOf(u.id)).toEqual({ attempts: 0, resolved: false });
      const run = expectOk(await runJobs(new Date().toISOString()));
      expect(run.dedicated_accounts_deactivated).toBeGreaterThanOrEqual(1);
      expect((await paystack.requests(`/dedicated_account/${va!.provider_account_id}`)).map((r) => r.method))
        .toEqual(['DELETE']);
      expect(await flagOf(u.id)).toEqual({ attempts: 0, resolved: true });
    });
  });
});
