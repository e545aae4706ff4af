// The refusals of the KYC area (docs/kyc.md): a request below the identity floor, or over a tier's
// limit. SQL raises both with their facts (private.kyc_floor_check, private.kyc_limit_check); the
// endpoints that move money declare them, and these write the sentences.
import { refusal } from '../core/http.ts';
import { nairaEn as naira } from '../core/money.ts';

type Movement = 'topup' | 'withdrawal' | 'escrow_charge' | 'escrow_transfer' | 'escrow_wallet';

/** The facts of kyc_limit_exceeded (amounts in kobo): which limit, by how much, what allows it. */
export interface LimitFacts {
  kyc_limit: 'single' | 'daily' | 'balance';
  field: string;
  movement: Movement;
  tier: number;
  amount: number;
  limit: number;
  used_today: number;
  balance: number;
  allowed_tier: number | null;
}

const MOVEMENT_WORDS: Record<Movement, string> = {
  topup: 'top-up',
  withdrawal: 'withdrawal',
  escrow_charge: "escrow's total charge",
  escrow_transfer: "escrow's total charge",
  escrow_wallet: "escrow's total charge",
};

function limitProblem(f: LimitFacts): { problem: string; remedy: string } {
  const problem = f.kyc_limit === 'single'
    ? `is over the tier ${f.tier} limit of ${naira(f.limit)} for one ${
      f.movement.startsWith('escrow') ? 'funding' : MOVEMENT_WORDS[f.movement]
    }`
    : f.kyc_limit === 'daily'
    ? `would take today's total (since 00:00 Lagos time) from ${naira(f.used_today)} to ${
      naira(f.used_today + f.amount)
    }, over the tier ${f.tier} daily limit of ${naira(f.limit)}`
    : `would take your wallet (with pending top-ups) from ${naira(f.balance)} to ${
      naira(f.balance + f.amount)
    }, over the tier ${f.tier} balance limit of ${naira(f.limit)}`;
  const remedy = f.allowed_tier === null
    ? 'no tier allows it'
    : `tier ${f.allowed_tier} allows it; kyc-status shows what tier ${f.allowed_tier} needs`;
  return { problem, remedy };
}

export const KYC_LIMIT_EXCEEDED = refusal<LimitFacts>({
  code: 'kyc_limit_exceeded',
  status: 403,
  when: "The amount is over the caller's KYC tier limit (single, daily or balance); the message names the " +
    'limit and the tier that allows it',
  then: 'Ask for less, wait for tomorrow (00:00 Lagos) for a daily limit, or verify to the tier the message names',
  message: (f) => {
    const { problem, remedy } = limitProblem(f);
    return `This ${MOVEMENT_WORDS[f.movement]} of ${naira(f.amount)} ${problem}: ${remedy}`;
  },
  details: (f) => {
    const { problem, remedy } = limitProblem(f);
    return [{ field: f.field, message: `${problem} (${remedy})`, code: 'kyc_limit_exceeded' }];
  },
  example: {
    kyc_limit: 'single',
    field: 'amount',
    movement: 'topup',
    tier: 1,
    amount: 6_000_000,
    limit: 5_000_000,
    used_today: 0,
    balance: 0,
    allowed_tier: 2,
  },
});

/** The facts of kyc_tier_required: the caller's tier moves no money (the identity floor). */
export interface TierRequiredFacts {
  action: Movement | 'virtual_account' | 'card' | 'merchant';
  field: string;
  tier: number;
  required_tier: number;
}

const ACTION_WORDS: Record<TierRequiredFacts['action'], string> = {
  topup: 'top up a wallet',
  withdrawal: 'withdraw',
  escrow_charge: 'fund an escrow',
  escrow_transfer: 'fund an escrow',
  escrow_wallet: 'fund an escrow',
  virtual_account: 'get a virtual account',
  card: 'save a card',
  merchant: 'open a merchant account',
};

const tierNeed = (f: TierRequiredFacts) =>
  `tier ${f.required_tier} is required: verify your identity (kyc-status shows what tier ${f.required_tier} needs)`;

export const KYC_TIER_REQUIRED = refusal<TierRequiredFacts>({
  code: 'kyc_tier_required',
  status: 403,
  when: "The caller's KYC tier moves no money (a phone-only account, below the identity floor), or is below " +
    'the tier an action needs (tier 4 to open a merchant account); the message names the tier to verify to',
  then: 'Take the user through verification (kyc-start) to the tier named, then retry',
  message: (f) =>
    `An account at tier ${f.tier} cannot ${ACTION_WORDS[f.action]}: ${
      f.action === 'merchant'
        ? 'merchants are businesses verified to the top tier'
        : 'money moves only once your identity is checked'
    }; ${tierNeed(f)}`,
  details: (f) => [{ field: f.field, message: tierNeed(f), code: 'kyc_tier_required' }],
  example: { action: 'topup', field: 'amount', tier: 0, required_tier: 1 },
});

/** The facts of a check that cannot be started again: the check, and who knew it was final. */
export interface CheckFacts {
  check: string;
}

export const KYC_CHECK_PASSED = refusal<CheckFacts>({
  code: 'kyc_check_passed',
  status: 409,
  when: 'The check asked for (a KYC level, or an identity number check) has passed already',
  then: 'Nothing to do: kyc-status shows the tier and what the next one needs',
  message: () => 'this check has already passed',
  example: { check: 'nin' },
});

export const KYC_CHECK_REJECTED = refusal<CheckFacts & { seen_by: 'service' | 'provider' }>({
  code: 'kyc_check_rejected',
  status: 409,
  when: 'The check was rejected for good (FINAL) and cannot be tried again',
  then: 'Do not retry; the user must contact support',
  message: (f) =>
    f.seen_by === 'provider'
      ? 'This verification was rejected for good and cannot be tried again'
      : 'this check was rejected for good and cannot be tried again',
  example: { check: 'nin', seen_by: 'service' },
});

export const KYC_PROVIDER_REFUSED = refusal<{ what: 'verification' | 'identity-check'; reason: string }>({
  code: 'kyc_provider_refused',
  status: 502,
  when: 'The verification or identity-check provider refused the request; nothing was started',
  then: "Retry later; the message has the provider's reason",
  message: (f) => `The ${f.what} provider refused the request (${f.reason}); try again later`,
  example: { what: 'identity-check', reason: 'Invalid credentials' },
});

/** The facts of identity_in_use: only the kind of number, never whose it is. */
export interface IdentityInUseFacts {
  check: 'nin' | 'bvn';
}

const NUMBER_WORDS: Record<IdentityInUseFacts['check'], string> = { nin: 'NIN', bvn: 'BVN' };

export const IDENTITY_IN_USE = refusal<IdentityInUseFacts>({
  code: 'identity_in_use',
  status: 409,
  when: 'The NIN or BVN has passed on another account: a number verifies one account only (the attempt is ' +
    "flagged for an operator and counts toward the day's limit)",
  then: "Check the number; if it is really the user's, they must contact support (nothing about the other " +
    'account is told)',
  message: (f) =>
    `This ${NUMBER_WORDS[f.check]} cannot verify this account: it is already verified on another one. ` +
    'If it is yours, contact support',
  details: (f) => [{
    field: 'id_number',
    message: `this ${NUMBER_WORDS[f.check]} already verifies another account`,
    code: 'identity_in_use',
  }],
  example: { check: 'nin' },
});
