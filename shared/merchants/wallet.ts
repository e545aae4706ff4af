// The merchant's wallet, for its owner (a user session): merchant-wallet-get and merchant-withdraw.
// The wallet is a ledger account of its own (kind merchant_wallet) that the merchant's fees are
// credited to (private.merchant_fee_pay, at every release of a merchant escrow). A withdrawal takes
// the path of wallet-withdraw (shared/money/payouts.ts): a pending transaction of the owner's,
// marked with the merchant, debited from the merchant's wallet, handed to the provider and settled
// by the transfer webhooks or reconciliation; a failed one goes back to the merchant's wallet
// (supabase/migrations/20261127220100_merchant_fee.sql).
import type { AuthUser } from '../auth/session.ts';
import { asService, callAsService } from '../core/db.ts';
import { toNaira } from '../core/money.ts';
import { providerUnavailable } from '../core/refusals.ts';
import { payments } from '../money/payments/index.ts';
import { payoutAccountOf, sendPayout } from '../money/payouts.ts';
import { TRANSFER_REFUSED } from '../money/refusals.ts';
import type { TransactionResponse } from '../money/schema.ts';
import { readTransaction } from '../money/transactions.ts';
import { recordedBeforeResume } from '../money/wallet.ts';
import { MERCHANT_NOT_FOUND } from './refusals.ts';
import type { MerchantWalletResponse } from './schema.ts';

/** The caller's merchant (id and name), or merchant_not_found. */
async function ownMerchant(user: AuthUser): Promise<{ id: string; name: string }> {
  const [[row]] = await callAsService((tx) => [
    tx<{ id: string; name: string }[]>`select id, name from private.merchants where owner_id = ${user.id}`,
  ]);
  if (!row) throw MERCHANT_NOT_FOUND.error({});
  return row;
}

/** merchant-wallet-get: the merchant's wallet balance, in naira. */
export async function merchantWalletGet(user: AuthUser): Promise<MerchantWalletResponse> {
  const [[row]] = await callAsService((tx) => [
    tx<{ balance: string }[]>`
      select private.merchant_wallet_balance(m.id)::text as balance from private.merchants m where m.owner_id = ${user.id}`,
  ]);
  if (!row) throw MERCHANT_NOT_FOUND.error({});
  return { balance: toNaira(row.balance), currency: 'NGN' };
}

/**
 * merchant-withdraw: the merchant's wallet to one of the owner's payout accounts (the default when
 * none is named), under the owner's KYC limits; handed to the provider at once.
 */
export async function merchantWithdraw(
  user: AuthUser,
  input: { amount: number; payout_account_id?: string },
): Promise<TransactionResponse> {
  const merchant = await ownMerchant(user);
  const account = await payoutAccountOf(user.id, input.payout_account_id);
  const [created] = await asService((tx) =>
    tx<{ id: string }[]>`
      select private.merchant_withdraw_create(${user.id}, ${merchant.id}, ${input.amount}, ${account.id},
                                              ${payments().name}) as id`
  );
  const txId = (created as { id: string }).id;
  // a retry that took over the claim of a request that died after recording this withdrawal: the
  // transfer may have been asked for; its webhook or reconciliation settles it, never a second one
  if (!(await recordedBeforeResume(txId))) {
    const sent = await sendPayout({
      kind: 'withdrawal',
      txId,
      account,
      amountKobo: input.amount,
      reason: `${merchant.name} merchant withdrawal`,
    });
    if (sent.status === 'failed' && sent.refused) {
      throw TRANSFER_REFUSED.error({ reason: sent.reason, wallet: 'merchant' });
    }
    if (sent.status === 'failed') {
      throw providerUnavailable(
        "The payment provider is unavailable; nothing was sent and the amount is back in the merchant's wallet, " +
          'try again shortly',
      );
    }
  }
  const view = await asService((tx) => readTransaction(tx, txId));
  // created in this request: not finding it is a bug
  if (!view) throw new Error(`merchant withdrawal ${txId} created but not found`);
  return view;
}
