// The provider's transfer recipient for a payout account, created on first use and kept on the
// account (payout-add creates it already when the provider answers then).
import { asService } from '../../core/db.ts';
import { payments } from './index.ts';

export interface PayoutAccountForTransfer {
  id: string;
  account_number: string;
  bank_code: string;
  account_name: string;
  provider_recipient_code: string | null;
}

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
