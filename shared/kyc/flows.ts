// KYC for a signed-in user (docs/kyc.md): where they stand (kyc-status), an SDK token
// for a KYC provider level (kyc-start) and an identity check (identity-verify). Checks pass or fail
// only by the providers' webhooks (shared/kyc/webhooks.ts); nothing here raises a tier.
import { hmacHex } from '../core/crypto.ts';
import { getConfig } from '../core/config.ts';
import { asService } from '../core/db.ts';
import type { KycCheckStatus, KycCheckType, KycRejectType } from './enums.ts';
import type { AuthUser } from '../auth/session.ts';
import { describeWait, type HttpError, retryAfterHeader } from '../core/http.ts';
import { providerUnavailable, RATE_LIMITED } from '../core/refusals.ts';
import { IDENTITY_IN_USE, KYC_CHECK_REJECTED, KYC_PROVIDER_REFUSED } from './refusals.ts';
import { log } from '../core/log.ts';
import { iso, toNaira } from '../core/money.ts';
import type { IdentityType, IdentityVerifyBody, KycStatusResponse } from './schema.ts';
import { identityProvider, kycProvider, levelName } from './index.ts';
import { type IdentityHolder, ProviderError, type VerificationType } from './provider.ts';

/** identity-verify's types: the check each records and the provider's verificationType. */
export const IDENTITY_CHECKS: Record<IdentityType, { check: KycCheckType; verificationType: VerificationType }> = {
  nin: { check: 'nin', verificationType: 'NIN' },
  bvn: { check: 'bvn', verificationType: 'BVN' },
  cac: { check: 'cac', verificationType: 'CAC' },
  tin: { check: 'tin', verificationType: 'TIN' },
  bank_account: { check: 'bank_account', verificationType: 'BANK_ACCOUNT' },
  director: { check: 'director_match', verificationType: 'DIRECTOR' },
};

/**
 * The checks of the holder's own number: the request carries the holder's names and phone, the
 * result must return the same names, and the number is bound to one account (docs/kyc.md).
 */
export const HOLDER_CHECKS: ReadonlySet<KycCheckType> = new Set(['nin', 'bvn']);

/** Each type as a message names it. */
const TYPE_WORDS: Record<IdentityType, string> = {
  nin: 'NIN',
  bvn: 'BVN',
  cac: 'CAC',
  tin: 'TIN',
  bank_account: 'bank account',
  director: 'director',
};

/** The check of each KYC provider level. */
const LEVEL_CHECKS: Record<1 | 2, KycCheckType> = { 1: 'kyc_basic', 2: 'kyc_address' };

interface TierRow {
  tier: number;
  single_limit: string;
  daily_limit: string;
  balance_limit: string | null;
  checks: KycCheckType[];
}

interface CheckRow {
  check_type: KycCheckType;
  status: KycCheckStatus;
  reject_labels: string[];
  reject_type: KycRejectType | null;
  updated_at: string;
}

export async function kycStatus(user: AuthUser): Promise<KycStatusResponse> {
  return asService(async (tx) => {
    const [me] = await tx<{ tier: number; used: string }[]>`
      select kyc_tier as tier, private.kyc_used_today(id, now()) as used from private.users where id = ${user.id}`;
    const tiers = await tx<TierRow[]>`select * from private.kyc_tiers order by tier`;
    const checks = await tx<CheckRow[]>`
      select check_type, status, reject_labels, reject_type, updated_at from private.kyc_checks
       where user_id = ${user.id} order by created_at, check_type`;
    const tier = me?.tier ?? 0;
    const mine = tiers.find((t) => t.tier === tier) as TierRow;
    const passed = new Set(checks.filter((c) => c.status === 'passed').map((c) => c.check_type));
    const next = tiers.find((t) => t.tier === tier + 1);
    const needs = next
      ? tiers.filter((t) => t.tier <= next.tier).flatMap((t) => t.checks).filter((c) => !passed.has(c))
      : [];
    return {
      tier,
      limits: {
        single: toNaira(mine.single_limit),
        daily: toNaira(mine.daily_limit),
        balance: mine.balance_limit === null ? null : toNaira(mine.balance_limit),
      },
      used_today: toNaira(me?.used ?? 0),
      checks: checks.map((c) => ({
        type: c.check_type,
        status: c.status,
        ...(c.status === 'failed' ? { reject_labels: c.reject_labels, can_retry: c.reject_type === 'RETRY' } : {}),
        updated_at: iso(c.updated_at),
      })),
      next_tier: next ? { tier: next.tier, needs } : null,
    };
  });
}

/** A provider call that failed, as the client sees it (nothing was started). */
function providerFailure(err: ProviderError, what: 'verification' | 'identity-check'): HttpError {
  return err.kind === 'refused'
    ? KYC_PROVIDER_REFUSED.error({ what, reason: err.message })
    : providerUnavailable(`The ${what} provider is unavailable; try again shortly`);
}

export async function kycStart(user: AuthUser, level: 1 | 2) {
  const provider = kycProvider();
  const check = LEVEL_CHECKS[level];
  // pending from now on: refused (409) when the check passed or was rejected for good. Marked
  // before the token is asked for, so a result arriving at once is never overwritten by it.
  await asService((tx) => tx`select private.kyc_start(${user.id}, ${check}, ${provider.name})`);
  const ttl = getConfig().KYC_TOKEN_TTL_SECONDS;
  let token: string;
  try {
    ({ token } = await provider.accessToken({ userId: user.id, levelName: levelName(level), ttlSeconds: ttl }));
  } catch (err) {
    if (err instanceof ProviderError) {
      log.warn('kyc.start_failed', { level, kind: err.kind, status: err.httpStatus ?? null });
      // Sumsub: the applicant was rejected for good (1009); we may simply not have heard yet
      if (err.kind === 'refused' && err.httpStatus === 409) {
        throw KYC_CHECK_REJECTED.error({ check, seen_by: 'provider' });
      }
      throw providerFailure(err, 'verification');
    }
    throw err;
  }
  return { token, level, expires_in: ttl };
}

/** The keyed hash an identity number is kept as (with its last 4 characters; never the number). */
export function identityHash(check: KycCheckType, idNumber: string): Promise<string> {
  return hmacHex('SHA-256', getConfig().IDENTITY_HASH_KEY, `${check}:${idNumber}`);
}

export async function identityVerify(user: AuthUser, body: IdentityVerifyBody) {
  const provider = identityProvider();
  const { check, verificationType } = IDENTITY_CHECKS[body.type];
  const hash = await identityHash(check, body.id_number);
  const last4 = body.id_number.slice(-4);
  const limit = getConfig().IDENTITY_VERIFY_MAX_PER_TYPE_PER_DAY;
  const created = await asService(
    async (tx): Promise<{ wait: number } | { inUse: true } | { reference: string; holder?: IdentityHolder }> => {
      // per type of check: a business needs six different ones, and may ask for them in one day
      const rules = [{ key: `identity-verify:${user.id}:${check}`, limit, window_seconds: 86_400 }];
      const [rate] = await tx<{ wait: number }[]>`select private.rate_limit_take(${tx.json(rules)}) as wait`;
      const wait = rate?.wait ?? 0;
      if (wait > 0) return { wait };
      // a NIN or BVN bound to another account: refused, flagged for an operator, and counted by the
      // limit above (this transaction commits), so the refusal cannot test numbers without end
      const [use] = await tx<{ in_use: boolean }[]>`
        select private.identity_number_in_use(${user.id}, ${check}, ${hash}, ${last4}) as in_use`;
      if (use?.in_use) return { inUse: true };
      const [row] = await tx<{ reference: string }[]>`
        select private.identity_request_create(${user.id}, ${check}, ${hash}, ${last4},
                 ${body.bank_code ?? null}, ${body.rc_number ?? null}, ${provider.name}) as reference`;
      const reference = (row as { reference: string }).reference;
      if (!HOLDER_CHECKS.has(check)) return { reference };
      // the result must name this holder: the provider is told who they say they are
      const [me] = await tx<{ first_name: string; last_name: string; phone: string }[]>`
        select p.first_name, p.last_name, u.phone
          from private.users u join public.profiles p on p.id = u.id where u.id = ${user.id}`;
      return {
        reference,
        holder: me && { firstName: me.first_name, lastName: me.last_name, phone: me.phone },
      };
    },
  );
  if ('wait' in created) {
    throw RATE_LIMITED.error(
      {
        message: `Too many ${TYPE_WORDS[body.type]} checks: at most ${limit} a day for each type of check; you can ` +
          `ask again in ${describeWait(created.wait)}`,
      },
      { headers: retryAfterHeader(created.wait) },
    );
  }
  if ('inUse' in created) {
    log.warn('identity.number_in_use', { check });
    throw IDENTITY_IN_USE.error({ check: check as 'nin' | 'bvn' });
  }
  try {
    await provider.requestCheck({
      reference: created.reference,
      verificationType,
      idNumber: body.id_number,
      bankCode: body.bank_code,
      rcNumber: body.rc_number,
      holder: created.holder,
    });
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    log.warn('identity.request_failed', {
      reference: created.reference,
      kind: err.kind,
      status: err.httpStatus ?? null,
    });
    await asService((tx) => tx`select private.identity_request_not_sent(${created.reference}, ${err.message})`);
    throw providerFailure(err, 'identity-check');
  }
  return { reference: created.reference, type: body.type, status: 'pending' as const };
}
