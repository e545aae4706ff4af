import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { accountDelete } from '../../../shared/account/delete.ts';
import {
  ACCOUNT_DELETE_CREDENTIALS_INVALID,
  ACCOUNT_DELETE_ESCROW_OPEN,
  ACCOUNT_DELETE_FROZEN,
  ACCOUNT_DELETE_MERCHANT_ACTIVE,
  ACCOUNT_DELETE_MONEY_PENDING,
  ACCOUNT_DELETE_OPERATOR,
  ACCOUNT_DELETE_WALLET_NOT_EMPTY,
} from '../../../shared/account/refusals.ts';
import { accountDeleteBody, accountDeletedResponse } from '../../../shared/account/schema.ts';

export default endpoint({
  name: 'account-delete',
  summary: "Deletes the caller's account, with the password and a fresh SMS code",
  description: 'A signed-in user, with the password and a code sent by auth-send-otp (context `account_delete`). ' +
    'Refused while the account is frozen or holds an operator role, while an escrow it is a party to is not ' +
    'final, a payment is pending, a wallet holds money or a merchant it owns is active; a refusal leaves the ' +
    'code usable. Then, at once: every session ends (its tokens are 401 from the next request), merchant keys ' +
    'are revoked, the dedicated account is deactivated, names and personal fields are erased (counterparties ' +
    'see `Deleted user`) and the phone is replaced by a keyed hash: a new sign-up with the phone is a new ' +
    'account. What is kept, and for how long, is in docs/compliance.md.',
  refusals: [
    ACCOUNT_DELETE_CREDENTIALS_INVALID,
    ACCOUNT_DELETE_FROZEN,
    ACCOUNT_DELETE_OPERATOR,
    ACCOUNT_DELETE_ESCROW_OPEN,
    ACCOUNT_DELETE_MONEY_PENDING,
    ACCOUNT_DELETE_WALLET_NOT_EMPTY,
    ACCOUNT_DELETE_MERCHANT_ACTIVE,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'deletes the account; a repeat is 401, its sessions are over',
  body: accountDeleteBody,
  response: accountDeletedResponse,
  handler: ({ user, body }) => accountDelete(user, body),
});
