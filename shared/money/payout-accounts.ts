// Payout accounts (payout-add, payout-list, payout-remove, payout-set-default): the bank accounts
// withdrawals and escrow payouts go to. Writes go through one SQL function each (defaults and
// deduplication are decided under a per-user lock there); reads run as the caller under RLS.
import { asService, asUser, isPgError } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import { errorMessage, log } from '../core/log.ts';
import { payments, ProviderError } from './payments/index.ts';
import { type PayoutAccountResponse, payoutAccountResponse, type PayoutRemovedResponse } from './schema.ts';
import { columnsOf } from '../core/rows.ts';
import {
  PAYOUT_ACCOUNT_DUPLICATE,
  PAYOUT_ACCOUNT_NAME_MISMATCH,
  PAYOUT_ACCOUNT_NOT_FOUND,
  PAYOUT_ACCOUNT_UNKNOWN_AT_BANK,
} from './refusals.ts';

/** A payout account as answered, read with its account number whole (payoutView masks it). */
const PAYOUT_COLUMNS = columnsOf(payoutAccountResponse);

/** Asterisks followed by the last four digits, the only form an account number leaves in. */
export const maskAccountNumber = (n: string) => `${'*'.repeat(Math.max(0, n.length - 4))}${n.slice(-4)}`;

const payoutView = (p: PayoutAccountResponse): PayoutAccountResponse => ({
  ...p,
  account_number: maskAccountNumber(p.account_number),
});

const words = (s: string) =>
  s
    .toUpperCase()
    .replace(/[^A-Z ]+/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 1);

/**
 * Names match when every word of the shorter one appears in the other (banks reorder names and
 * add middle names) and at least two words agree, unless the bank holds a one-word name: a lone
 * first name is not enough to verify someone.
 */
export function namesMatch(given: string, resolved: string): boolean {
  const a = words(given);
  const b = words(resolved);
  if (a.length === 0 || b.length === 0) return false;
  const [shorter, longer] = a.length <= b.length ? [a, new Set(b)] : [b, new Set(a)];
  return shorter.length >= Math.min(2, b.length) && shorter.every((w) => longer.has(w));
}

const duplicatePayout = () => PAYOUT_ACCOUNT_DUPLICATE.error({ field: 'account_number' });

export async function payoutAdd(
  user: AuthUser,
  input: { bank_code: string; bank_name: string; account_number: string; account_name: string },
) {
  const provider = payments();
  // A duplicate is refused before the provider is asked anything (no orphan recipients there).
  const [existing] = await asService((tx) =>
    tx`
    select 1 from public.payout_accounts
     where user_id = ${user.id} and bank_code = ${input.bank_code} and account_number = ${input.account_number}`
  );
  if (existing) throw duplicatePayout();
  let verified = false;
  let accountName = input.account_name;
  try {
    const resolved = await provider.resolveAccount({ accountNumber: input.account_number, bankCode: input.bank_code });
    if (resolved) {
      if (!namesMatch(input.account_name, resolved.accountName)) {
        throw PAYOUT_ACCOUNT_NAME_MISMATCH.error({ field: 'account_name' });
      }
      verified = true;
      accountName = resolved.accountName;
    } else if (provider.name === 'paystack') {
      throw PAYOUT_ACCOUNT_UNKNOWN_AT_BANK.error({ field: 'account_number' });
    }
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    // The provider could not be asked: the account is kept, marked unverified.
    log.warn('payout.resolve_unavailable', { user_id: user.id, error: errorMessage(err) });
  }
  let recipientCode: string | null = null;
  try {
    recipientCode = (await provider.createTransferRecipient({
      name: accountName,
      accountNumber: input.account_number,
      bankCode: input.bank_code,
    })).recipientCode;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    log.warn('payout.recipient_deferred', { user_id: user.id, error: errorMessage(err) }); // created at the first withdrawal
  }
  let id: string;
  try {
    const [row] = await asService((tx) =>
      tx<{ id: string }[]>`
      select private.payout_add(${user.id}, ${input.bank_code}, ${input.bank_name}, ${input.account_number},
                                ${accountName}, ${verified}, ${recipientCode}) as id`
    );
    id = (row as { id: string }).id;
  } catch (err) {
    if (isPgError(err, '23505')) throw duplicatePayout();
    throw err;
  }
  const [saved] = await asUser(
    user.claims,
    (tx) => tx<PayoutAccountResponse[]>`select ${tx(PAYOUT_COLUMNS)} from public.payout_accounts where id = ${id}`,
  );
  return payoutView(saved as PayoutAccountResponse);
}

export const payoutList = ({ claims }: AuthUser) =>
  asUser(
    claims,
    async (tx) =>
      (await tx<PayoutAccountResponse[]>`
        select ${tx(PAYOUT_COLUMNS)} from public.payout_accounts where user_id = (select auth.uid())
         order by is_default desc, created_at desc, id`).map(payoutView),
  );

export async function payoutRemove(user: AuthUser, accountId: string): Promise<PayoutRemovedResponse> {
  const [row] = await asService((tx) =>
    tx<{ ok: boolean }[]>`select private.payout_remove(${user.id}, ${accountId}) as ok`
  );
  if (!row?.ok) {
    throw PAYOUT_ACCOUNT_NOT_FOUND.error({ field: 'payout_account_id', payout_account_id: accountId });
  }
  return { removed: true, payout_account_id: accountId };
}

export async function payoutSetDefault(user: AuthUser, accountId: string) {
  const [row] = await asService((tx) =>
    tx<{ ok: boolean }[]>`select private.payout_set_default(${user.id}, ${accountId}) as ok`
  );
  if (!row?.ok) {
    throw PAYOUT_ACCOUNT_NOT_FOUND.error({ field: 'payout_account_id', payout_account_id: accountId });
  }
  const [saved] = await asUser(
    user.claims,
    (tx) =>
      tx<PayoutAccountResponse[]>`select ${tx(PAYOUT_COLUMNS)} from public.payout_accounts where id = ${accountId}`,
  );
  return payoutView(saved as PayoutAccountResponse);
}
