// Account deletion (docs/compliance.md#account-deletion): the password and a fresh SMS code, then
// one transaction (private.account_delete) that refuses while anything is open or held, else ends
// the sessions and erases or pseudonymises what the user left; after its commit, the dedicated
// account is deactivated at the provider.
import type { AuthUser } from '../auth/session.ts';
import { getConfig } from '../core/config.ts';
import { asService } from '../core/db.ts';
import { hmacHex } from '../core/crypto.ts';
import { afterResponse } from '../core/background.ts';
import { errorMessage, log } from '../core/log.ts';
import { checkOtp, hasLiveOtp } from '../auth/otp.ts';
import { burnPasswordCheck, verifyPassword } from '../auth/password.ts';
import { payments } from '../money/payments/index.ts';
import { ACCOUNT_DELETE_CREDENTIALS_INVALID } from './refusals.ts';
import type { AccountDeletedResponse } from './schema.ts';

/** The keyed hash a deleted account's phone is replaced by: HMAC-SHA-256 under PHONE_HASH_KEY, hex. */
export const phoneHash = (phone: string): Promise<string> => hmacHex('SHA-256', getConfig().PHONE_HASH_KEY, phone);

interface Deleted {
  sessions_ended: number;
  virtual_account: { provider: string; provider_account_id: string | null; account_number: string } | null;
}

export async function accountDelete(
  user: AuthUser,
  body: { password: string; otp_code: string },
): Promise<AccountDeletedResponse> {
  const [account] = await asService((tx) =>
    tx<{ phone: string; password_hash: string | null }[]>`
    select phone, password_hash from private.users where id = ${user.id} and deleted_at is null`
  );
  // no live code: refuse before spending a password hash on the request. Every failure of the
  // password or the code is one answer: a caller holding a stolen token learns nothing about the
  // password from it.
  if (!account || !(await hasLiveOtp(account.phone, 'account_delete'))) {
    throw ACCOUNT_DELETE_CREDENTIALS_INVALID.error({});
  }
  const passwordOk = account.password_hash
    ? await verifyPassword(body.password, account.password_hash)
    : await burnPasswordCheck(body.password, getConfig().PASSWORD_PBKDF2_ITERATIONS);
  const hash = await phoneHash(account.phone);
  // The code is checked in the deletion's transaction: a refusal of the deletion rolls its use back
  // (the user fixes what is open and tries again with the same code); a wrong try is kept.
  const outcome = await asService(async (tx) => {
    const checked = await checkOtp(tx, account.phone, 'account_delete', body.otp_code, passwordOk);
    if (checked !== 'ok') return { refused: checked } as const;
    const [row] = await tx<{ result: Deleted }[]>`select private.account_delete(${user.id}, ${hash}) as result`;
    const deleted = row?.result as Deleted;
    // the deactivation is recorded with the deletion: a crash before the call below loses nothing,
    // the job asks the provider once the flag has waited DEACTIVATION_RETRY_AFTER
    const va = deleted.virtual_account;
    if (va) {
      await tx`select private.deactivation_requested(${user.id}, ${va.provider}, ${va.provider_account_id}, true)`;
    }
    return { deleted } as const;
  });
  if ('refused' in outcome) throw ACCOUNT_DELETE_CREDENTIALS_INVALID.error({});
  const va = outcome.deleted.virtual_account;
  if (va) afterResponse('account.deactivate_virtual_account', () => deactivate(user.id, va));
  return { deleted: true, sessions_ended: outcome.deleted.sessions_ended };
}

/**
 * The dedicated account stops taking transfers; what still arrives is credited to suspense and
 * flagged. The deletion's transaction left an open flag for it (private.deactivation_requested):
 * the provider's confirmation resolves it (private.deactivation_done); a failure (or no call: the
 * provider's id unknown) counts an attempt on it (private.deactivation_failed), and it is counted in
 * admin-queue-list's deactivations_failed queue until an operator or a later try resolves it.
 */
async function deactivate(userId: string, va: NonNullable<Deleted['virtual_account']>): Promise<void> {
  if (va.provider_account_id) {
    await askDeactivation(userId, va.provider, va.provider_account_id);
    return;
  }
  log.warn('account.virtual_account_unknown_id', { provider: va.provider });
  await asService((tx) =>
    tx`select private.deactivation_failed(${userId}, ${va.provider}, ${null}, ${"the provider's id of the account is unknown"})`
  );
}

/**
 * Asks the provider to deactivate one dedicated account: its confirmation resolves the open flag
 * (private.deactivation_done), a failure counts an attempt on it (private.deactivation_failed).
 * Answers whether the provider confirmed.
 */
async function askDeactivation(userId: string, provider: string, providerAccountId: string): Promise<boolean> {
  try {
    await payments().deactivateDedicatedAccount({ providerAccountId });
    log.info('account.virtual_account_deactivated', { provider });
    await asService((tx) => tx`select private.deactivation_done(${userId})`);
    return true;
  } catch (err) {
    const error = errorMessage(err);
    log.error('account.virtual_account_deactivation_failed', { provider, error });
    await asService((tx) =>
      tx`select private.deactivation_failed(${userId}, ${provider}, ${providerAccountId}, ${error})`
    );
    return false;
  }
}

/** How long the job waits after a failed deactivation before it asks the provider again. */
export const DEACTIVATION_RETRY_AFTER = '1 hour';

/**
 * The job's retry of deactivations not confirmed: each open flag never tried (a dedicated account
 * assigned after the deletion) or whose last try is older than DEACTIVATION_RETRY_AFTER (at the
 * job's `now`: a call that failed, or one a crash lost after the deletion's commit), and whose
 * account the provider knows, is asked again; a success resolves the flag, a failure counts another attempt. Answers how many succeeded.
 */
export async function retryDeactivations(at: string, limit = 20): Promise<number> {
  const open = await asService((tx) =>
    tx<{ user_id: string; provider: string; provider_account_id: string }[]>`
    select user_id, details ->> 'provider' as provider, details ->> 'provider_account_id' as provider_account_id
      from private.operator_flags
     where kind = 'dedicated_account_deactivation_failed' and resolved_at is null and user_id is not null
       and details ->> 'provider_account_id' is not null
       and (details ->> 'last_attempt_at' is null
         or (details ->> 'last_attempt_at')::timestamptz < ${at}::timestamptz - ${DEACTIVATION_RETRY_AFTER}::interval)
     order by created_at limit ${limit}`
  );
  let done = 0;
  for (const f of open) {
    if (await askDeactivation(f.user_id, f.provider, f.provider_account_id)) done++;
  }
  if (open.length > 0) log.info('account.virtual_account_deactivation_retried', { tried: open.length, done });
  return done;
}
