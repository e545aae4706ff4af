// The refusal of a frozen account (docs/money.md#frozen-accounts): an operator froze it, and
// until it is unfrozen it moves no money out, funds, creates and releases nothing and adds no
// instrument; merchants it owns are frozen with it. SQL raises it with its facts
// (private.account_frozen_check, in the transition's own SQL); this writes the sentence.
import { refusal } from '../core/http.ts';

/** What the frozen account tried to do (private.account_frozen_check's actions). */
export type FrozenAction =
  | 'topup'
  | 'withdrawal'
  | 'escrow_charge'
  | 'escrow_transfer'
  | 'escrow_wallet'
  | 'virtual_account'
  | 'card'
  | 'payout_account'
  | 'escrow_create'
  | 'release'
  | 'release_milestone'
  | 'merchant_escrow'
  | 'merchant_key';

const ACTION_WORDS: Record<FrozenAction, string> = {
  topup: 'top up a wallet',
  withdrawal: 'withdraw',
  escrow_charge: 'fund an escrow',
  escrow_transfer: 'fund an escrow',
  escrow_wallet: 'fund an escrow',
  virtual_account: 'get a virtual account',
  card: 'save a card',
  payout_account: 'save a payout account',
  escrow_create: 'create an escrow',
  release: 'release an escrow',
  release_milestone: 'release a milestone',
  merchant_escrow: 'create escrows for its merchant',
  merchant_key: "use its merchant's keys",
};

/** The facts of account_frozen: what was refused, and the request field it is reported on. */
export interface FrozenFacts {
  action: FrozenAction;
  field: string;
}

const NEXT = 'money paid to it is kept in its wallet until then; contact support';

export const ACCOUNT_FROZEN = refusal<FrozenFacts>({
  code: 'account_frozen',
  status: 403,
  when: "An operator froze the account (or, for a merchant, its owner's account): until it is unfrozen it " +
    'cannot withdraw, top up, fund, create or release an escrow, or add a card, payout account or virtual ' +
    "account, and its merchants' keys are refused",
  then: 'Do not retry: only an operator unfreezes the account; the user must contact support',
  message: (f) =>
    `A frozen account cannot ${ACTION_WORDS[f.action] ?? 'do this'}: an operator must unfreeze it; ${NEXT}`,
  details: (f) => [{ field: f.field, message: `the account is frozen; ${NEXT}`, code: 'account_frozen' }],
  example: { action: 'withdrawal', field: 'amount' },
});
