// deno-lint-ignore-file no-explicit-any -- answers of the real server are read as untyped JSON here
// Driving the KYC fake (tests/fakes/kyc.ts: Sumsub and the identity contract) from tests. The
// answers webhook-kyc and webhook-identity gave to the webhooks the fake delivered are checked
// against their response schemas (./responses.ts), as the Paystack fake's are.
import { inject } from 'vitest';
import { checkSuccessBody } from './responses.ts';

const fakeUrl = () => inject('fakeKycUrl');

async function control<T = any>(path: string, body?: unknown, webhook?: string): Promise<T> {
  const res = await fetch(`${fakeUrl()}/_fake${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = await res.json();
  if (!res.ok) throw new Error(`fake kyc ${path}: ${JSON.stringify(out)}`);
  const deliveries = (out as { responses?: unknown }).responses;
  if (webhook && Array.isArray(deliveries)) {
    for (const r of deliveries as { status: number; body: unknown }[]) {
      await checkSuccessBody(webhook, r.status, r.body);
    }
  }
  return out as T;
}

export type DigestAlg = 'HMAC_SHA512_HEX' | 'HMAC_SHA256_HEX' | 'HMAC_SHA1_HEX';

export interface Delivery<P = any> {
  /** The server's answer to each copy sent. */
  responses: { status: number; body: any }[];
  /** What was sent (the object before serialisation; a string body as given). */
  payload: P;
}

export interface SendOptions {
  /** Copies of the same bytes (default 1). */
  times?: number;
  /** Send the copies all at once instead of one after another. */
  concurrent?: boolean;
}

export interface SumsubSigning {
  /** The x-payload-digest-alg header (default HMAC_SHA512_HEX); null: no header, SHA-512. */
  alg?: DigestAlg | null;
  /** Sent as x-payload-digest instead of the right digest. */
  signature?: string;
}

export interface SumsubReview extends SendOptions, SumsubSigning {
  userId: string;
  levelName: string;
  answer: 'GREEN' | 'RED';
  /** RED only (default ['UNSATISFACTORY_PHOTOS']). */
  rejectLabels?: string[];
  /** RED only (default RETRY). A RED FINAL makes the fake's token call answer 409 / 1009. */
  reviewRejectType?: 'RETRY' | 'FINAL';
  moderationComment?: string;
  clientComment?: string;
  /** Default applicantReviewed. */
  type?: string;
  /** Sumsub's 'YYYY-MM-DD HH:mm:ss.SSS' (UTC); default now, strictly increasing within the fake. */
  createdAtMs?: string;
}

export interface SumsubWebhook {
  applicantId: string;
  inspectionId: string;
  applicantType: string;
  correlationId: string;
  externalUserId: string;
  levelName: string;
  type: string;
  sandboxMode: boolean;
  reviewResult: {
    reviewAnswer: 'GREEN' | 'RED';
    rejectLabels?: string[];
    reviewRejectType?: string;
    moderationComment?: string;
    clientComment?: string;
  };
  reviewStatus: string;
  createdAtMs: string;
  clientId: string;
}

export interface IdentityResult extends SendOptions {
  reference: string;
  /** Default 'found' (a pass); anything else is a failure. */
  status?: string;
  /** Default: the type the request with that reference asked for (required for an unknown reference). */
  verificationType?: string;
  /** Sent as x-identity-webhook-token instead of the right one. */
  token?: string;
  /**
   * The names found for the number; null: none. Default: for a NIN or BVN found, the names its
   * request sent, in capitals and swapped (surname as firstName), as a registry writes them.
   */
  names?: { firstName?: string; middleName?: string; lastName?: string } | null;
}

export interface IdentityWebhook {
  reference: string;
  verificationType: string;
  status: string;
  provider: string;
  providerReference: string;
  completedAt: string;
  idLast4?: string;
  firstName?: string;
  middleName?: string;
  lastName?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: any;
  at: string;
  sumsub?: { appToken: string | null; ts: string | null; signature: string | null; signatureValid: boolean };
  identity?: { authorized: boolean; idLast4: string | null };
}

/** A failure rule; field/value narrow it to calls whose body field has that value. */
export interface FailRule {
  path: string;
  mode: 'refuse' | 'unavailable' | 'timeout';
  field?: string;
  value?: string;
}

export const kycFake = {
  /** What the fake received, oldest first (path: e.g. '/resources/accessTokens/sdk', '/identity/verifications'). */
  requests: (path?: string) =>
    control<RecordedRequest[]>(`/requests${path ? `?path=${encodeURIComponent(path)}` : ''}`),
  /** Makes calls fail until clearFail: refuse (4xx), unavailable (500) or timeout (no answer). */
  fail: (rule: FailRule) => control('/fail', rule),
  /** Drops the rules that match (all of them without an argument: other suites' too). */
  clearFail: (match: Partial<Omit<FailRule, 'mode'>> = {}) => control('/clear-fail', match),
  /** Sets (or with final false, clears) a FINAL rejection for userId + level: the token call answers 409 / 1009. */
  sumsubFinal: (userId: string, levelName: string, final = true) =>
    control('/sumsub-final', { userId, levelName, final }),
  /** A signed applicantReviewed (or `type`) webhook to webhook-kyc. */
  sumsubReview: (review: SumsubReview) => control<Delivery<SumsubWebhook>>('/sumsub-review', review, 'webhook-kyc'),
  /** Any event to webhook-kyc: an object, or a string sent byte for byte. */
  sumsubEvent: (body: unknown, opts: SendOptions & SumsubSigning = {}) =>
    control<Delivery>('/sumsub-event', { body, ...opts }, 'webhook-kyc'),
  /** A check's result to webhook-identity. */
  identityResult: (result: IdentityResult) =>
    control<Delivery<IdentityWebhook>>('/identity-result', result, 'webhook-identity'),
  /** Answers every new verification request by itself, 50 ms later, with `status` (default 'found'). */
  identityAuto: (enabled: boolean, status?: string) => control('/identity-auto', { enabled, status }),
};
