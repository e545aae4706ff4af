// The refusals of the money area: wallets, cards, payout accounts, virtual accounts and charges.
// Each code is declared once (docs/errors.md lists them all); another area's endpoint that answers
// one imports it from here (escrow-fund: INSUFFICIENT_FUNDS, CARD_NOT_FOUND, CARD_DECLINED,
// CHARGE_REFUSED).
import { refusal } from '../core/http.ts';
import { nairaEn as naira } from '../core/money.ts';

/**
 * The facts of insufficient_funds (amounts in kobo): the field asking for more than there is (the
 * withdrawal's `amount`, or the `escrow_id` whose total charge the wallet cannot cover), the
 * wallet's balance and the amount asked.
 */
export interface InsufficientFundsFacts {
  field: string;
  balance: number;
  amount: number;
}

const shortBy = (f: InsufficientFundsFacts) => naira(Math.max(f.amount - f.balance, 0));

export const INSUFFICIENT_FUNDS = refusal<InsufficientFundsFacts>({
  code: 'insufficient_funds',
  status: 409,
  when: 'The wallet holds less than the amount to take from it (a withdrawal, or an escrow funded from the wallet)',
  then: 'Ask for at most the balance (wallet-get), top up the wallet first, or pay an escrow by card',
  message: (f) =>
    f.field === 'escrow_id'
      ? `Insufficient funds: this escrow needs ${naira(f.amount)} from your wallet, which holds ${naira(f.balance)} (${
        shortBy(f)
      } short); top up the wallet or pay by card`
      : 'Insufficient funds',
  details: (
    f,
  ) => [{
    field: f.field,
    message: f.field === 'escrow_id' ? `needs ${shortBy(f)} more in the wallet` : 'is more than the available balance',
  }],
  example: { field: 'amount', balance: 500_000, amount: 2_000_000 },
});

export const PAYOUT_ACCOUNT_NOT_FOUND = refusal<{ field: string; payout_account_id: string }>({
  code: 'payout_account_not_found',
  status: 404,
  when: "The payout account named is not one of the caller's (or was removed)",
  then: 'List the payout accounts (payout-list) and name one of them',
  message: () => 'Payout account not found',
  details: (f) => [{ field: f.field, message: 'is not one of your payout accounts' }],
  example: { field: 'payout_account_id', payout_account_id: '6f1c2d9e-0b7a-4f51-9a3e-2c8d5b7e1f04' },
});

export const PAYOUT_ACCOUNT_REQUIRED = refusal<{ field: string }>({
  code: 'payout_account_required',
  status: 409,
  when: 'A withdrawal names no payout account and the caller has no default payout account',
  then: 'Add a payout account (payout-add) or name one in payout_account_id, then retry',
  message: () => 'You have no default payout account: add one with payout-add, or name one',
  details: (f) => [{
    field: f.field,
    message: 'is required when you have no default payout account; add one with payout-add',
  }],
  example: { field: 'payout_account_id' },
});

export const PAYOUT_ACCOUNT_DUPLICATE = refusal<{ field: string }>({
  code: 'payout_account_duplicate',
  status: 409,
  when: 'The caller has already saved this account number at this bank',
  then: 'Use the saved payout account (payout-list); nothing was added',
  message: () => 'This payout account is already saved',
  details: (f) => [{ field: f.field, message: 'is already one of your payout accounts at this bank' }],
  example: { field: 'account_number' },
});

export const PAYOUT_ACCOUNT_NAME_MISMATCH = refusal<{ field: string }>({
  code: 'payout_account_name_mismatch',
  status: 409,
  when: 'The account name given is not the name the bank holds for the account number',
  then: "Send the account holder's name as the bank holds it (or check the account number and bank)",
  message: () => 'The account name does not match the name the bank holds',
  details: (f) => [{ field: f.field, message: 'does not match the name the bank holds for this account' }],
  example: { field: 'account_name' },
});

export const PAYOUT_ACCOUNT_UNKNOWN_AT_BANK = refusal<{ field: string }>({
  code: 'payout_account_unknown_at_bank',
  status: 409,
  when: 'The bank has no account with this number',
  then: 'Check the account number and the bank code',
  message: () => 'The bank has no account with this number',
  details: (f) => [{ field: f.field, message: 'could not be found at this bank' }],
  example: { field: 'account_number' },
});

export const CARD_NOT_FOUND = refusal<{ field: string; card_id: string }>({
  code: 'card_not_found',
  status: 404,
  when: "The saved card named is not one of the caller's (or was removed)",
  then: 'List the saved cards (card-list) and name one of them, or pay with a new card',
  message: () => 'Card not found',
  details: (f) => [{ field: f.field, message: 'is not one of your saved cards' }],
  example: { field: 'card_id', card_id: '0d4e8a51-7c3b-4b2f-8e69-1a5f3c9d2b70' },
});

export const CARD_AUTHORIZATION_INVALID = refusal<{ field: string }>({
  code: 'card_authorization_invalid',
  status: 409,
  when: "The payments provider does not confirm the authorization code as a reusable card of the caller's (made " +
    "up, another customer's, or not reusable); nothing was saved",
  then: "Save the card from the authorization of the caller's own successful card charge, as the provider returned it",
  message: () => 'The payments provider does not confirm this card authorization for your account',
  details: (
    f,
  ) => [{ field: f.field, message: 'is not a reusable card authorization of yours at the payments provider' }],
  example: { field: 'authorization_code' },
});

export const CARD_DECLINED = refusal<{ reason: string }>({
  code: 'card_declined',
  status: 402,
  when: 'A saved card was charged and the bank declined it; nothing was charged',
  then: 'Pay with another card (or a new one through checkout)',
  message: (f) => `The card was declined: ${f.reason}`,
  example: { reason: 'Insufficient Funds' },
});

export const CHARGE_REFUSED = refusal<{ reason: string }>({
  code: 'charge_refused',
  status: 402,
  when: 'The payment provider refused to start the charge; nothing was charged',
  then: "Retry later, or pay another way; the message has the provider's reason",
  message: (f) => `The payment provider refused the charge: ${f.reason}`,
  example: { reason: 'Invalid amount' },
});

export const TRANSFER_REFUSED = refusal<{ reason: string; wallet?: 'merchant' }>({
  code: 'transfer_refused',
  status: 502,
  when: 'The payment provider refused the transfer to the bank; the amount is back in the wallet it left',
  then: "Retry later or withdraw to another payout account; the message has the provider's reason",
  message: (f) =>
    `The transfer could not be started (${f.reason}); the amount is back in ${
      f.wallet === 'merchant' ? "the merchant's wallet" : 'your wallet'
    }`,
  example: { reason: 'Recipient account is invalid' },
});

export const VIRTUAL_ACCOUNT_REFUSED = refusal<{ reason: string }>({
  code: 'virtual_account_refused',
  status: 502,
  when: 'The payment provider refused to assign a dedicated account',
  then: 'Retry later; virtual-account-create may be called again after a failure',
  message: (f) => `The virtual account could not be requested (${f.reason}); try again`,
  example: { reason: 'Customer could not be created' },
});

export const VIRTUAL_ACCOUNT_NOT_FOUND = refusal({
  code: 'virtual_account_not_found',
  status: 404,
  when: 'The caller has no dedicated account yet',
  then: 'Create one with virtual-account-create',
  message: () => 'No virtual account yet; create one with virtual-account-create',
  example: {},
});
