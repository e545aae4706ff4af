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
import { OTP_INVALID } from '../auth/refusals.ts';
import { payments } from '../money/payments/index.ts';
import { PASSWORD_INCORRECT } from './refusals.ts';
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
  // no live code: refuse before spending a password hash on the request
  if (!account || !(await hasLiveOtp(account.phone, 'account_delete'))) throw OTP_INVALID.error({});
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
    return { deleted: row?.result as Deleted } as const;
  });
  if ('refused' in outcome) {
    throw passwordOk ? OTP_INVALID.error({}) : PASSWORD_INCORRECT.error({});
  }
  const va = outcome.deleted.virtual_account;
  if (va) afterResponse('account.deactivate_virtual_account', () => deactivate(va));
  return { deleted: true, sessions_ended: outcome.deleted.sessions_ended };
}

/** The dedicated account stops taking transfers; what still arrives is credited to suspense and flagged. */
async function deactivate(va: NonNullable<Deleted['virtual_account']>): Promise<void> {
  if (!va.provider_account_id) {
    log.warn('account.virtual_account_unknown_id', { provider: va.provider });
    return;
  }
  try {
    await payments().deactivateDedicatedAccount({ providerAccountId: va.provider_account_id });
    log.info('account.virtual_account_deactivated', { provider: va.provider });
  } catch (err) {
    log.error('account.virtual_account_deactivation_failed', { provider: va.provider, error: errorMessage(err) });
  }
}
