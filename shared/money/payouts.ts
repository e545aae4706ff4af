// Payouts: money that leaves a user's wallet for their bank account, by one path for both kinds.
// A withdrawal (wallet-withdraw) is created here; an escrow payout is created by the release that
// credited the payee (private.escrow_start_payout, in the release's transaction) and handed to the
// provider after the commit, or by the job when that never happened. Either way the transaction
// is pending and already debited from the wallet into the provider's clearing account, names the
// configured payments provider, and its id is the transfer reference, so a retry can never pay
// twice. sendPayout hands it to the provider (the account's transfer recipient, created on first
// use, then /transfer); transfer.success / failed / reversed (webhook-payments) or reconciliation
// settle it.
import { asService } from '../core/db.ts';
import { errorMessage, log } from '../core/log.ts';
import { payments, ProviderError } from './payments/index.ts';
import { type PayoutAccountForTransfer, recipientFor, TRANSFER_ACCOUNT_COLUMNS } from './payments/recipient.ts';
import { PAYOUT_ACCOUNT_NOT_FOUND, PAYOUT_ACCOUNT_REQUIRED } from './refusals.ts';

type PayoutKind = 'withdrawal' | 'escrow_payout';

/** How handing a payout to the provider went. */
export type PayoutSent =
  | { status: 'sent'; transferCode: string }
  /**
   * Failed now, the money back in the wallet: the provider refused, or nothing can have been
   * sent (the recipient could not be created, the account is gone).
   */
  | { status: 'failed'; reason: string; refused: boolean }
  /** /transfer gave no usable answer: the payout stays pending and its webhook settles it. */
  | { status: 'unknown' };

/**
 * The account a withdrawal pays: the user's payout account `id`, or their default one
 * (payout_account_not_found / payout_account_required naming payout_account_id). Below the identity floor the 403 of kyc_tier_required comes first, so
 * that a phone-only account learns what it needs before it adds an account it could not use yet.
 */
export async function payoutAccountOf(userId: string, id?: string): Promise<PayoutAccountForTransfer> {
  const [account] = await asService(async (tx) => {
    await tx`select private.kyc_floor_check(${userId}, 'withdrawal', 'amount')`;
    return tx<PayoutAccountForTransfer[]>`
      select ${tx(TRANSFER_ACCOUNT_COLUMNS)} from public.payout_accounts
       where user_id = ${userId} and ${id ? tx`id = ${id}` : tx`is_default`}`;
  });
  if (account) return account;
  if (id) throw PAYOUT_ACCOUNT_NOT_FOUND.error({ field: 'payout_account_id', payout_account_id: id });
  throw PAYOUT_ACCOUNT_REQUIRED.error({ field: 'payout_account_id' });
}

/** A pending withdrawal of amountKobo to account, debited from the wallet (insufficient_funds when short). */
export async function createWithdrawal(userId: string, amountKobo: number, account: PayoutAccountForTransfer) {
  const [created] = await asService((tx) =>
    tx<{ id: string }[]>`
    select private.withdrawal_create(${userId}, ${amountKobo}, ${account.id}, ${payments().name}) as id`
  );
  return (created as { id: string }).id;
}

/** Fails a payout that was not paid: the money goes back to the wallet once; a payee is told. */
async function failPayout(kind: PayoutKind, txId: string, reason: string): Promise<void> {
  await asService(async (tx) => {
    const [row] = await tx<{ outcome: string }[]>`select private.payout_fail(${txId}, ${reason}, null) as outcome`;
    if (kind === 'escrow_payout' && row?.outcome === 'failed') {
      await tx`select private.escrow_payout_settled(${txId}, false)`;
    }
  });
}

/**
 * Hands one pending payout to the provider. Until /transfer has been asked nothing can have been
 * paid, so any failure before it fails the payout now; a refusal of /transfer too. No answer from
 * /transfer leaves it pending: the transfer may exist, and only its webhook (keyed by our
 * reference) or reconciliation may settle it, never a second attempt.
 */
export async function sendPayout(p: {
  kind: PayoutKind;
  txId: string;
  account: PayoutAccountForTransfer | undefined;
  amountKobo: number;
  reason: string;
}): Promise<PayoutSent> {
  let transferRequested = false;
  try {
    if (!p.account) throw new ProviderError('refused', 'payout account no longer exists');
    const recipient = await recipientFor(p.account);
    transferRequested = true;
    const t = await payments().initiateTransfer({
      reference: p.txId,
      amountKobo: p.amountKobo,
      recipientCode: recipient,
      reason: p.reason,
    });
    await asService((tx) =>
      tx`
      update public.transactions set provider_transfer_id = ${t.transferCode} where id = ${p.txId}`
    );
    return { status: 'sent', transferCode: t.transferCode };
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'refused' || !transferRequested) {
      const reason = err.kind === 'refused' ? err.message : 'payment provider unavailable';
      await failPayout(p.kind, p.txId, reason);
      return { status: 'failed', reason, refused: err.kind === 'refused' };
    }
    log.warn(`${p.kind}.outcome_unknown`, { transaction_id: p.txId, error: errorMessage(err) });
    return { status: 'unknown' };
  }
}

/**
 * Sends an escrow payout (an escrow_payout transaction a release created) to the provider, once.
 * The attempt is recorded first, with the provider it goes through: a payout whose attempt had no
 * answer is settled by the transfer webhooks, never re-sent (that could pay twice); only payouts
 * never attempted (a crash between the commit and this call) are picked up again by the job. A
 * frozen payee's payout is not sent (null): it waits, pending, and the job sends it once they are
 * unfrozen.
 */
export async function startEscrowPayout(txId: string): Promise<PayoutSent | null> {
  const [p] = await asService((tx) =>
    tx<{ amount: string; payout_account_id: string; escrow_id: string }[]>`
    update public.transactions
       set provider = ${payments().name}, metadata = metadata || jsonb_build_object('transfer_attempted_at', now())
     where id = ${txId} and type = 'escrow_payout' and status = 'pending' and not (metadata ? 'transfer_attempted_at')
       and not private.account_frozen(user_id)
    returning amount::text, metadata ->> 'payout_account_id' as payout_account_id, escrow_id`
  );
  if (!p) return null;
  const [account] = await asService((tx) =>
    tx<PayoutAccountForTransfer[]>`
    select ${tx(TRANSFER_ACCOUNT_COLUMNS)} from public.payout_accounts where id = ${p.payout_account_id}`
  );
  return sendPayout({
    kind: 'escrow_payout',
    txId,
    account,
    amountKobo: Number(p.amount),
    reason: `Escrow payout ${p.escrow_id}`,
  });
}
