// The refusals of account deletion (docs/compliance.md#account-deletion): an account is deleted only
// when nothing is open or held, so no counterparty, payment or operator is left waiting on someone
// who is gone. SQL raises them with their facts (private.account_delete); these write the sentences.
import { refusal } from '../core/http.ts';

export const ACCOUNT_DELETE_CREDENTIALS_INVALID = refusal({
  code: 'account_delete_credentials_invalid',
  status: 403,
  when: 'account-delete: the password is wrong, or the code is wrong, expired, already used, burnt, or was never ' +
    'asked for (one answer for all, so that a stolen token does not tell whether a password is right)',
  then: 'Ask the user to check the password and the code, or to send a new code (auth-send-otp, context ' +
    '`account_delete`); each wrong try costs the code one of its tries',
  message: () => 'The password or the code is wrong, or the code has expired',
  example: {},
});

export const ACCOUNT_DELETE_FROZEN = refusal({
  code: 'account_delete_frozen',
  status: 403,
  when: 'account-delete: an operator froze the account',
  then: 'Do not retry: only an operator unfreezes the account; the user must contact support',
  message: () => 'A frozen account cannot be deleted: contact support',
  example: {},
});

export const ACCOUNT_DELETE_OPERATOR = refusal<{ roles: string[] }>({
  code: 'account_delete_operator',
  status: 403,
  when: 'account-delete: the account holds an operator role',
  then: 'An admin revokes the roles first (admin-role-revoke); then delete the account',
  message: (f) =>
    `An account with an operator role (${f.roles.join(', ')}) cannot be deleted: its roles must be revoked first`,
  example: { roles: ['support'] },
});

export const ACCOUNT_DELETE_ESCROW_OPEN = refusal<{ escrows: number }>({
  code: 'account_delete_escrow_open',
  status: 409,
  when: 'account-delete: an escrow the account is a party to (as initiator or counterparty, or named by its ' +
    'phone) is not final (released, refunded, cancelled, deleted or ended)',
  then: 'Finish, cancel or decline those escrows (escrow-list shows them), then delete the account',
  message: (f) =>
    `The account cannot be deleted while ${f.escrows} escrow${f.escrows === 1 ? ' is' : 's are'} open: ` +
    'finish, cancel or decline them first',
  example: { escrows: 1 },
});

export const ACCOUNT_DELETE_MONEY_PENDING = refusal<{ transactions: number }>({
  code: 'account_delete_money_pending',
  status: 409,
  when: 'account-delete: a transaction of the account or its merchants is pending (a top-up, a withdrawal, a ' +
    'payout, a charge held for review)',
  then: 'Wait until it settles (transaction-list shows it), then delete the account',
  message: (f) =>
    `The account cannot be deleted while ${f.transactions} payment${f.transactions === 1 ? ' is' : 's are'} ` +
    'pending: wait until they settle',
  example: { transactions: 1 },
});

export const ACCOUNT_DELETE_WALLET_NOT_EMPTY = refusal<{ balance: number }>({
  code: 'account_delete_wallet_not_empty',
  status: 409,
  when: "account-delete: the wallet (or a wallet of the account's merchants) holds money",
  then: 'Withdraw the balance (wallet-withdraw, merchant-withdraw), then delete the account',
  message: (f) =>
    `The account cannot be deleted while its wallets hold ₦${(f.balance / 100).toFixed(2)}: withdraw it first`,
  example: { balance: 150000 },
});

export const ACCOUNT_DELETE_MERCHANT_ACTIVE = refusal<{ merchant_id: string }>({
  code: 'account_delete_merchant_active',
  status: 409,
  when: 'account-delete: a merchant the account owns is not closed',
  then: 'The merchant must be closed first (its escrows finished, its wallet withdrawn): no endpoint closes a ' +
    'merchant yet, so the user contacts support',
  message: () => 'The account cannot be deleted while a merchant it owns is active: contact support to close it',
  example: { merchant_id: '3f6c1b2a-8d4e-4f7a-9b0c-1d2e3f4a5b6c' },
});
