// KYC limits: what a refusal says when a request is over a tier's limit
// (docs/kyc.md#tiers-and-their-limits). The tiers themselves, the checks each adds and the limits
// it allows, are rows of private.kyc_tiers, seeded by the kyc migration; the tests read the seeded
// figures from tests/support/seeds.ts, which `npm run gen` makes from them.
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED, type LimitFacts, type TierRequiredFacts } from './refusals.ts';

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

/**
 * Transitional, for services not converted yet (escrow): the builder words these refusals itself
 * from the code in DETAIL (private.refuse), so a service need not catch them.
 * What a service that calls a limit-checked SQL function (private.kyc_limit_check, or
 * private.kyc_floor_check) throws when that function failed: the 403 of a refusal below the
 * identity floor or over a KYC limit (shared/kyc/refusals.ts), or the error as it was.
 */
export function overLimitOr(err: unknown): unknown {
  const required = tierRequiredFacts(err);
  if (required) return KYC_TIER_REQUIRED.error(required);
  const facts = limitFacts(err);
  return facts ? KYC_LIMIT_EXCEEDED.error(facts) : err;
}
