// Wallet operations: balance, card top-ups, withdrawals and the dedicated virtual account.
// Every money movement is one SQL function (supabase/migrations/*_wallet.sql); this file calls
// the provider and those functions in the right order. Our transaction id is the provider
// reference, so a retry can never charge or pay twice. Withdrawals go through shared/money/payouts.ts,
// the path escrow payouts take too.
import { asService, asUser, inline, readAsServiceThenUser, readAsUser, sqlText } from '../core/db.ts';
import { claimResumed, currentKeyClaim } from '../core/key-claim.ts';
import type { AuthUser } from '../auth/session.ts';
import { providerUnavailable } from '../core/refusals.ts';
import { TRANSFER_REFUSED, VIRTUAL_ACCOUNT_NOT_FOUND, VIRTUAL_ACCOUNT_REFUSED } from './refusals.ts';
import { toNaira } from '../core/money.ts';
import { JsonText } from '../core/json-text.ts';
import { savedCardAuthorization, startCharge } from './payments/charge.ts';
import { customerEmail, payments, ProviderError } from './payments/index.ts';
import { createWithdrawal, payoutAccountOf, sendPayout } from './payouts.ts';
import {
  type VirtualAccountResponse,
  virtualAccountResponse,
  type WalletResponse,
  type WalletTopupResponse,
} from './schema.ts';
import { columnsOf, selectList } from '../core/rows.ts';
import { readTransaction } from './transactions.ts';

/** The virtual account as answered; the failure reason of the last request is shown only while inactive. */
const VA_COLUMNS = columnsOf(virtualAccountResponse);
const VA_SELECT = selectList(VA_COLUMNS);

const virtualAccountView = (v: VirtualAccountResponse): VirtualAccountResponse => ({
  ...v,
  failure_reason: v.status === 'inactive' ? v.failure_reason : null,
});

/**
 * The balance from the ledger (private, read as service_role), then the pending movements and the
 * virtual account as the user (row-level security): one transaction, one round trip.
 */
export async function walletGet({ claims }: AuthUser): Promise<JsonText<WalletResponse>> {
  const [[row]] = await readAsUser(claims, (tx) => [sqlText<{ body: string }[]>(tx, 'select reads.wallet() as body')]);
  return new JsonText((row as { body: string }).body);
}

/**
 * The same answer built here from the rows: what the test of the reads Postgres builds
 * (tests/integration/reads-built.test.ts) compares walletGet's text with.
 */
export async function walletGetAsObject({ claims }: AuthUser): Promise<WalletResponse> {
  const [[[balance]], [[pending], [va]]] = await readAsServiceThenUser(
    claims,
    (tx) => [
      inline(tx)<{ balance: string }[]>`select private.wallet_balance(${claims.sub}::uuid) as balance`,
    ],
    (tx) => [
      tx<{ deposits: string; withdrawals: string }[]>`
        select coalesce(sum(amount) filter (where category = 'deposit'), 0) as deposits,
               coalesce(sum(amount) filter (where category = 'withdrawal'), 0) as withdrawals
          from public.transactions where user_id = (select auth.uid()) and status = 'pending'`,
      sqlText<VirtualAccountResponse[]>(
        tx,
        `select ${VA_SELECT} from public.virtual_accounts where user_id = (select auth.uid())`,
      ),
    ],
  );
  return {
    balance: toNaira(balance?.balance ?? 0),
    pending_deposits: toNaira(pending?.deposits ?? 0),
    pending_withdrawals: toNaira(pending?.withdrawals ?? 0),
    currency: 'NGN',
    virtual_account: va ? virtualAccountView(va) : null,
  };
}

export async function walletTopup(
  user: AuthUser,
  input: { amount: number; card_id?: string; callback_url?: string },
): Promise<WalletTopupResponse> {
  const provider = payments();
  const authorizationCode = input.card_id ? await savedCardAuthorization(user.id, input.card_id) : undefined;
  const [created] = await asService((tx) =>
    tx<{ id: string }[]>`
    select private.topup_create(${user.id}, ${input.amount}, ${provider.name}, ${input.card_id ?? null}) as id`
  );
  const reference = (created as { id: string }).id;
  // a retry that took over the claim of a request that died after recording this top-up: the
  // charge may have been started; its webhook or reconciliation settles it, never a second start
  if (await recordedBeforeResume(reference)) {
    return {
      transaction_id: reference,
      reference,
      amount: toNaira(input.amount),
      status: 'pending',
      authorization_url: null,
    };
  }
  const started = await startCharge({
    reference,
    amountKobo: input.amount,
    userId: user.id,
    metadata: { kind: 'wallet_topup', transaction_id: reference, user_id: user.id },
    authorizationCode,
    callbackUrl: input.callback_url,
    markFailed: (reason) => asService((tx) => tx`select private.topup_fail(${reference}, ${reason})`),
  });
  return { transaction_id: reference, reference, amount: toNaira(input.amount), status: 'pending', ...started };
}

/** wallet-withdraw: a pending withdrawal, handed to the provider at once (shared/money/payouts.ts). */
export async function walletWithdraw(
  user: AuthUser,
  input: { amount: number; payout_account_id?: string; reason?: string },
) {
  const account = await payoutAccountOf(user.id, input.payout_account_id);
  const txId = await createWithdrawal(user.id, input.amount, account);
  // a retry that took over the claim of a request that died after recording this withdrawal: the
  // transfer may have been asked for; its webhook or reconciliation settles it, never a second one
  if (await recordedBeforeResume(txId)) return await withdrawalView(txId);
  const reason = input.reason ?? 'Wallet withdrawal';
  const sent = await sendPayout({ kind: 'withdrawal', txId, account, amountKobo: input.amount, reason });
  if (sent.status === 'failed' && sent.refused) {
    throw TRANSFER_REFUSED.error({ reason: sent.reason });
  }
  if (sent.status === 'failed') {
    throw providerUnavailable(
      'The payment provider is unavailable; nothing was sent and the amount is back in your wallet, try again shortly',
    );
  }
  return await withdrawalView(txId);
}

/**
 * Whether the movement (created under the request's Idempotency-Key reference) was recorded by
 * an earlier request whose claim this one took over (claimResumed), rather than just now.
 */
export async function recordedBeforeResume(txId: string): Promise<boolean> {
  const claim = currentKeyClaim();
  if (!claimResumed() || !claim) return false;
  const [row] = await asService((tx) =>
    tx<{ before: boolean }[]>`
    select t.created_at < k.claimed_at as before
      from public.transactions t, private.idempotency_keys k
     where t.id = ${txId} and k.reference = t.id
       and k.user_id = ${claim.userId} and k.operation = ${claim.operation} and k.key = ${claim.key}`
  );
  return row?.before === true;
}

async function withdrawalView(txId: string) {
  const view = await asService((tx) => readTransaction(tx, txId));
  // created in this request: not finding it is a bug
  if (!view) throw new Error(`withdrawal ${txId} created but not found`);
  return view;
}

export async function virtualAccountGet({ claims }: AuthUser) {
  return asUser(claims, async (tx) => {
    const [va] = await tx<VirtualAccountResponse[]>`
      select ${tx(VA_COLUMNS)} from public.virtual_accounts where user_id = (select auth.uid())`;
    if (!va) throw VIRTUAL_ACCOUNT_NOT_FOUND.error({});
    return virtualAccountView(va);
  });
}

/** Requests a dedicated account; a pending or active one is returned as it is (retry only after failure). */
export async function virtualAccountCreate(user: AuthUser) {
  const provider = payments();
  const claimed = await asService(async (tx) => {
    const [claim] = await tx<{ mine: boolean }[]>`
      select private.virtual_account_claim(${user.id}, ${provider.name}) as mine`;
    const [current] = await tx<VirtualAccountResponse[]>`
      select ${tx(VA_COLUMNS)} from public.virtual_accounts where user_id = ${user.id}`;
    return { row: current as VirtualAccountResponse, mine: claim?.mine === true };
  });
  if (!claimed.mine) return virtualAccountView(claimed.row);

  const [profile] = await asService((tx) =>
    tx<{ first_name: string; last_name: string }[]>`
    select first_name, last_name from public.profiles where id = ${user.id}`
  );
  try {
    await provider.assignDedicatedAccount({
      email: customerEmail(user.id),
      firstName: profile?.first_name ?? 'Customer',
      lastName: profile?.last_name ?? 'Customer',
      phone: user.phone,
    });
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    const reason = err.kind === 'refused' ? err.message : 'payment provider unavailable';
    await asService((tx) =>
      tx`update public.virtual_accounts set status = 'inactive', failure_reason = ${reason}, updated_at = now()
                              where user_id = ${user.id} and status = 'pending'`
    );
    throw err.kind === 'refused'
      ? VIRTUAL_ACCOUNT_REFUSED.error({ reason })
      : providerUnavailable(VIRTUAL_ACCOUNT_REFUSED.message({ reason }));
  }
  return virtualAccountView(claimed.row);
}
