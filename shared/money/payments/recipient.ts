// The provider's transfer recipient for a payout account, created on first use and kept on the
// account (payout-add creates it already when the provider answers then).
import { asService } from '../../core/db.ts';
import { payments } from './index.ts';
import type { z } from 'zod';
import { columnsOf, type RowOf } from '../../core/rows.ts';
import { payoutAccountResponse } from '../schema.ts';

/** What a payout needs of its account: four of its answered fields (the number whole) and the recipient. */
const transferAccount = payoutAccountResponse.pick({
  id: true,
  account_number: true,
  bank_code: true,
  account_name: true,
});

/** The columns of a PayoutAccountForTransfer. */
export const TRANSFER_ACCOUNT_COLUMNS = columnsOf(transferAccount, { stored: ['provider_recipient_code'] });

export type PayoutAccountForTransfer = RowOf<
  z.input<typeof transferAccount>,
  never,
  { provider_recipient_code: string | null }
>;

export async function recipientFor(account: PayoutAccountForTransfer): Promise<string> {
  if (account.provider_recipient_code) return account.provider_recipient_code;
  const { recipientCode } = await payments().createTransferRecipient({
    name: account.account_name,
    accountNumber: account.account_number,
    bankCode: account.bank_code,
  });
  await asService((tx) =>
    tx`update public.payout_accounts set provider_recipient_code = ${recipientCode} where id = ${account.id}`
  );
  return recipientCode;
}
