// webhook-kyc (Sumsub) and webhook-identity (the identity-check provider): authenticated on the
// raw request, then each event taken once, its effect (the check's result and the tier) in the same
// transaction as the inbox row that makes a redelivery a no-op (private.kyc_sumsub_event,
// private.identity_event). An authenticated event is answered 200 {received: true} whatever it
// said; a failure of ours is a 500, and the provider delivers it again later (nothing was kept).
import { sha256Hex } from '../core/crypto.ts';
import { afterCommit } from '../core/background.ts';
import { getConfig } from '../core/config.ts';
import type { HeaderAuth } from '../core/endpoint.ts';
import { asService } from '../core/db.ts';
import { INVALID_SIGNATURE } from '../core/refusals.ts';
import { log } from '../core/log.ts';
import { dispatchQueuedSms } from '../messages/sms-outbox.ts';
import { checkTypeOfLevel } from './index.ts';
import { DEFAULT_ALG, validIdentityToken, verifyKycDigest } from './signature.ts';
import { HOLDER_CHECKS, IDENTITY_CHECKS } from './flows.ts';
import type { KycCheckType } from './enums.ts';
import { namesMatch } from './names.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const text = (v: unknown, max = 200): string | null =>
  typeof v === 'string' && v.length > 0 && v.length <= max ? v : null;

/** Sumsub's webhook digest headers. */
export const KYC_SIGNATURE: HeaderAuth = {
  scheme: 'sumsubDigest',
  description: "Sumsub's digest of the raw body with KYC_WEBHOOK_SECRET: x-payload-digest, with its algorithm " +
    'in x-payload-digest-alg (HMAC_SHA1_HEX, HMAC_SHA256_HEX or HMAC_SHA512_HEX).',
  headers: [
    { name: 'x-payload-digest', required: true, description: 'The HMAC of the raw body, in hex' },
    {
      name: 'x-payload-digest-alg',
      required: false,
      description: `The algorithm of x-payload-digest (${DEFAULT_ALG} when absent)`,
    },
  ],
};

/** The identity-check provider's shared token header (docs/kyc.md). */
export const IDENTITY_TOKEN: HeaderAuth = {
  scheme: 'identityToken',
  description: 'The shared secret IDENTITY_WEBHOOK_SECRET, sent as is by the identity-check provider.',
  headers: [{ name: 'x-identity-webhook-token', required: true, description: 'The shared secret' }],
};

export async function verifyKycSignature(req: Request, raw: Uint8Array): Promise<void> {
  const [digest, alg] = KYC_SIGNATURE.headers.map((h) => req.headers.get(h.name));
  const ok = await verifyKycDigest(getConfig().KYC_WEBHOOK_SECRET, raw, digest ?? null, alg ?? null);
  if (!ok) throw INVALID_SIGNATURE.error({ what: 'webhook signature' });
}

export function verifyIdentityToken(req: Request): Promise<void> {
  const token = req.headers.get(IDENTITY_TOKEN.headers[0]?.name ?? '');
  if (!validIdentityToken(getConfig().IDENTITY_WEBHOOK_SECRET, token)) {
    return Promise.reject(INVALID_SIGNATURE.error({ what: 'webhook token' }));
  }
  return Promise.resolve();
}

/**
 * Sumsub's createdAtMs ('2025-03-01 10:15:30.123', UTC) or the older createdAt
 * ('2020-02-21 13:23:19+0000'): when the review happened, so that a late older result never
 * overrides a newer one. Null when missing or unreadable, or outside the years 1 to 9999 in UTC.
 */
export function sumsubTime(e: Json): Date | null {
  const raw = text(e.createdAtMs, 40) ?? text(e.createdAt, 40);
  if (!raw) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)(Z|[+-]\d{2}:?\d{2})?$/.exec(raw.trim());
  if (!m) return null;
  const zone = m[3] === undefined ? 'Z' : m[3] === 'Z' ? 'Z' : m[3].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const d = new Date(`${m[1]}T${m[2]}${zone}`);
  // Postgres keeps years 1 to 9999 as we write them (no year 0; 10000 in ISO's +010000 form is refused)
  const year = d.getUTCFullYear();
  return Number.isNaN(d.getTime()) || year < 1 || year > 9999 ? null : d;
}

/** What an applicantReviewed says: passed (GREEN), failed (RED), or null when not a completed review. */
function review(e: Json): { passed: boolean | null; labels: string[]; rejectType: 'RETRY' | 'FINAL' | null } {
  const result = obj(e.reviewResult);
  const answer = result.reviewAnswer;
  const completed = e.reviewStatus === undefined || e.reviewStatus === 'completed';
  if (!completed || (answer !== 'GREEN' && answer !== 'RED')) return { passed: null, labels: [], rejectType: null };
  const labels = Array.isArray(result.rejectLabels)
    ? result.rejectLabels.filter((l): l is string => typeof l === 'string' && l.length <= 100).slice(0, 50)
    : [];
  const t = result.reviewRejectType;
  return {
    passed: answer === 'GREEN',
    labels,
    rejectType: answer === 'RED' ? (t === 'FINAL' ? 'FINAL' : 'RETRY') : null,
  };
}

export async function webhookKyc(
  e: Json & { type: string },
  raw: Uint8Array,
  requestId: string,
): Promise<{ received: true }> {
  // Sumsub's events carry no id: a redelivery is the same bytes
  const key = `sumsub:${await sha256Hex(new TextDecoder().decode(raw))}`;
  const userText = text(e.externalUserId, 100);
  const user = userText && UUID.test(userText) ? userText.toLowerCase() : null;
  const level = text(e.levelName, 100);
  const check = level ? checkTypeOfLevel(level) : null;
  const r = review(e);
  const at = sumsubTime(e);
  // the inbox keeps only what is read here (private.kyc_sumsub_kept): no names, dates or documents
  const outcome = await asService(async (tx) => {
    const [row] = await tx<{ outcome: string }[]>`
      select private.kyc_sumsub_event(${key}, ${e.type}, ${tx.json(e as never)}, ${user}, ${check}, ${r.passed},
               array(select pg_catalog.jsonb_array_elements_text(${tx.json(r.labels)})), ${r.rejectType}, ${
      text(e.applicantId, 100)
    }, ${at}) as outcome`;
    return (row as { outcome: string }).outcome;
  });
  log.info('webhook.kyc', { type: e.type, level_name: level, outcome, event_key: key, request_id: requestId });
  if (outcome.includes(':')) await afterCommit('sms.dispatch', () => dispatchQueuedSms());
  return { received: true };
}

/** The spec's verificationType -> our check type (NIN -> nin, ..., DIRECTOR -> director_match). */
const VERIFICATION_TYPES = new Map<string, string>(
  Object.values(IDENTITY_CHECKS).map((v) => [v.verificationType, v.check]),
);

export async function webhookIdentity(
  e: Json & { reference: string; verificationType: string; status: string },
  requestId: string,
): Promise<{ received: true }> {
  const check = VERIFICATION_TYPES.get(e.verificationType.toUpperCase()) ?? null;
  const status = e.status.toLowerCase();
  const key = `identity:${e.reference}:${e.verificationType}:${status}`;
  const outcome = await asService(async (tx) => {
    // a NIN or BVN found must name the holder: the names returned against the profile's, decided
    // here (shared/kyc/names.ts); the names themselves are never stored
    const [holder] = await tx<{ check_type: string; first_name: string | null; last_name: string | null }[]>`
      select r.check_type, p.first_name, p.last_name
        from private.identity_requests r left join public.profiles p on p.id = r.user_id
       where r.reference = ${e.reference}`;
    const namesMatter = holder !== undefined && HOLDER_CHECKS.has(holder.check_type as KycCheckType);
    const namesOk = namesMatter ? holderNamed(holder, e) : null;
    // only the contract's fields are kept: a provider may send names, dates of birth or photos
    const kept = {
      reference: e.reference,
      verificationType: e.verificationType,
      status: e.status,
      idLast4: text(e.idLast4, 4),
      providerReference: text(e.providerReference, 100),
      completedAt: text(e.completedAt, 40),
      ...(namesOk === null ? {} : { namesMatch: namesOk }),
    };
    const [row] = await tx<{ outcome: string }[]>`
      select private.identity_event(${key}, ${e.reference}, ${check}, ${status === 'found'}, ${status},
               ${tx.json(kept)}, ${namesOk}) as outcome`;
    return (row as { outcome: string }).outcome;
  });
  log.info('webhook.identity', { verification_type: e.verificationType, outcome, request_id: requestId });
  if (outcome.includes(':')) await afterCommit('sms.dispatch', () => dispatchQueuedSms());
  return { received: true };
}

/** Whether a result's names are the profile's (false when either side has none). */
function holderNamed(profile: { first_name: string | null; last_name: string | null }, e: Json): boolean {
  if (profile.first_name === null || profile.last_name === null) return false;
  return namesMatch({ first: profile.first_name, last: profile.last_name }, {
    firstName: text(e.firstName),
    middleName: text(e.middleName),
    lastName: text(e.lastName),
  });
}
