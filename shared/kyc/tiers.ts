// KYC limits: what a refusal says when a request is over a tier's limit
// (docs/kyc.md#tiers-and-their-limits). The tiers themselves, the checks each adds and the limits
// it allows, are rows of private.kyc_tiers, seeded by the kyc migration; the tests read the seeded
// figures from tests/support/seeds.ts, which `npm run gen` makes from them.
import { HttpError, legacyError } from '../core/http.ts';
import { nairaEn } from '../core/money.ts';

/** What private.kyc_limit_check puts in DETAIL when it refuses (amounts in kobo). */
export interface LimitFacts {
  kyc_limit: 'single' | 'daily' | 'balance';
  field: string;
  movement: 'topup' | 'withdrawal' | 'escrow_charge' | 'escrow_transfer' | 'escrow_wallet';
  tier: number;
  amount: number;
  limit: number;
  used_today: number;
  balance: number;
  allowed_tier: number | null;
}

const MOVEMENT_WORDS: Record<LimitFacts['movement'], string> = {
  topup: 'top-up',
  withdrawal: 'withdrawal',
  escrow_charge: "escrow's total charge",
  escrow_transfer: "escrow's total charge",
  escrow_wallet: "escrow's total charge",
};

/**
 * What private.kyc_floor_check puts in DETAIL when it refuses: the user's tier moves no money
 * (the identity floor, docs/compliance.md), and `required_tier` is the lowest tier that does.
 */
export interface TierRequiredFacts {
  code: 'kyc_tier_required';
  action: LimitFacts['movement'] | 'virtual_account' | 'card';
  field: string;
  tier: number;
  required_tier: number;
}

/** The JSON facts a database refusal of status 403 carries in DETAIL, else null. */
function forbiddenFacts(err: unknown): Record<string, unknown> | null {
  const e = err as { code?: string; detail?: string } | null;
  if (e?.code !== 'ES403' || typeof e.detail !== 'string' || !e.detail.startsWith('{')) return null;
  try {
    const facts: unknown = JSON.parse(e.detail);
    return facts && typeof facts === 'object' ? facts as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** The facts of a KYC limit refusal, when a database error is one (else null). */
export function limitFacts(err: unknown): LimitFacts | null {
  const facts = forbiddenFacts(err);
  return typeof facts?.kyc_limit === 'string' ? (facts as unknown as LimitFacts) : null;
}

/** The facts of a refusal below the identity floor, when a database error is one (else null). */
export function tierRequiredFacts(err: unknown): TierRequiredFacts | null {
  const facts = forbiddenFacts(err);
  return facts?.code === 'kyc_tier_required' ? (facts as unknown as TierRequiredFacts) : null;
}

/** A request's refusal over a KYC limit, as endpoints declare it (`refusals` of endpoint({...})). */
export const OVER_KYC_LIMIT =
  'Over a KYC tier limit: the message names the limit, the amount and the tier that allows it';

/** A request's refusal below the identity floor, as endpoints declare it. */
export const KYC_TIER_REQUIRED =
  "The account's tier moves no money (phone only): the message names the tier to verify to";

/**
 * What a service that calls a limit-checked SQL function (private.kyc_limit_check, or
 * private.kyc_floor_check) throws when that function failed: the 403 of a refusal below the
 * identity floor or over a KYC limit, or the error as it was.
 */
export function overLimitOr(err: unknown): unknown {
  const required = tierRequiredFacts(err);
  if (required) return tierRequiredRefusal(required);
  const facts = limitFacts(err);
  return facts ? limitRefusal(facts) : err;
}

const ACTION_WORDS: Record<TierRequiredFacts['action'], string> = {
  topup: 'top up a wallet',
  withdrawal: 'withdraw',
  escrow_charge: 'fund an escrow',
  escrow_transfer: 'fund an escrow',
  escrow_wallet: 'fund an escrow',
  virtual_account: 'get a virtual account',
  card: 'save a card',
};

/**
 * The 403 of a request below the identity floor: which tier the account is at, what it cannot do
 * and the tier that lets money move; the detail names the request's money field (or `kyc_tier`
 * when the request has none).
 */
export function tierRequiredRefusal(f: TierRequiredFacts): HttpError {
  const need =
    `tier ${f.required_tier} is required: verify your identity (kyc-status shows what tier ${f.required_tier} needs)`;
  return legacyError(
    403,
    `An account at tier ${f.tier} cannot ${ACTION_WORDS[f.action]}: money moves only once your identity is ` +
      `checked; ${need}`,
    [{ field: f.field, message: need }],
  );
}

/**
 * The 403 a request over a limit gets: the message says which limit, by how much and what would
 * allow it; the detail names the request's money field (amount, or escrow_id for escrow-fund).
 */
export function limitRefusal(f: LimitFacts): HttpError {
  const what = MOVEMENT_WORDS[f.movement];
  const naira = nairaEn;
  const problem = f.kyc_limit === 'single'
    ? `is over the tier ${f.tier} limit of ${naira(f.limit)} for one ${
      f.movement.startsWith('escrow') ? 'funding' : what
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
  const amount = naira(f.amount);
  return legacyError(
    403,
    `This ${what} of ${amount} ${problem}: ${remedy}`,
    [{ field: f.field, message: `${problem} (${remedy})` }],
  );
}
