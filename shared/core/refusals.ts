// The refusals every endpoint can answer, whatever it does: the request's shape, the caller, the
// method and size, Idempotency-Key, rate limits and what is briefly unavailable. The catalog
// (shared/refusals/catalog.ts) includes these beside the areas' own; docs/errors.md lists them all.
import { PROVIDER_RETRY_AFTER_SECONDS, refusal, retryAfterHeader } from './http.ts';

const VALIDATION_MESSAGES = {
  body: 'Validation failed',
  query: 'Invalid query parameters',
  json: 'Request body is not valid JSON',
  no_body: 'This endpoint takes no body',
  idempotency_key: 'Invalid Idempotency-Key header',
  last_event_id: 'Invalid Last-Event-ID header',
} as const;

export const VALIDATION_FAILED = refusal<{ part: keyof typeof VALIDATION_MESSAGES }>({
  code: 'validation_failed',
  status: 400,
  when: 'The query, the body or a header is malformed, whatever the stored state; `details` names each field',
  then: 'Fix the request as each `details` item says; sending it again unchanged is refused again',
  message: (f) => VALIDATION_MESSAGES[f.part],
  example: { part: 'body' },
  exampleDetails: [{ field: 'amount', message: 'must be at least NGN 100.00' }],
});

export const UNAUTHENTICATED = refusal<{ reason: 'missing' | 'invalid' | 'ended' | 'key' }>({
  code: 'unauthenticated',
  status: 401,
  when: 'The access token is missing, invalid or expired, or its session has ended (for a merchant API key: it ' +
    'is unknown or revoked)',
  then: 'Refresh the session with auth-refresh (or log in again), then retry; a merchant uses a live key',
  message: (f) =>
    f.reason === 'missing'
      ? 'Missing bearer token'
      : f.reason === 'ended'
      ? 'Session has ended, log in again'
      : f.reason === 'key'
      ? 'Invalid or revoked API key'
      : 'Invalid or expired access token',
  example: { reason: 'invalid' },
});

export const INVALID_SIGNATURE = refusal<{ what: 'webhook signature' | 'webhook token' | 'jobs secret' }>({
  code: 'invalid_signature',
  status: 401,
  when: "A webhook's or the scheduler's signature header is missing or wrong",
  then:
    'Sign the request with the shared secret as the provider documents; a request with a wrong signature is never processed',
  message: (f) => `Invalid or missing ${f.what}`,
  example: { what: 'webhook signature' },
});

export const FUNCTION_NOT_FOUND = refusal<{ name: string }>({
  code: 'function_not_found',
  status: 404,
  when: 'No function has this name (and an operator endpoint answers exactly so to anyone who is not an operator)',
  then: 'Check the operation name in the base URL',
  message: (f) => `No function named ${f.name}`,
  example: { name: 'escrow-frobnicate' },
});

export const METHOD_NOT_ALLOWED = refusal<{ method: string; allowed: string }>({
  code: 'method_not_allowed',
  status: 405,
  when: 'The request used another HTTP method than the operation takes (the Allow header names it)',
  then: 'Use the method in the Allow header',
  message: (f) => `Method ${f.method} is not allowed; use ${f.allowed}`,
  example: { method: 'GET', allowed: 'POST' },
});

export const PAYLOAD_TOO_LARGE = refusal({
  code: 'payload_too_large',
  status: 413,
  when: 'The body is larger than 1 MiB',
  then: 'Send a smaller body',
  message: () => 'Request body is larger than 1 MiB',
  example: {},
});

export const IDEMPOTENCY_KEY_REUSED = refusal({
  code: 'idempotency_key_reused',
  status: 409,
  when: 'The Idempotency-Key was used before with another body (for this operation, within 24 hours)',
  then: 'Use a new key for a new request; reuse a key only to retry the same request',
  message: () => 'This Idempotency-Key was already used with a different request',
  example: {},
});

export const IDEMPOTENCY_IN_PROGRESS = refusal({
  code: 'idempotency_in_progress',
  status: 409,
  when: 'The first request with this Idempotency-Key is still being processed',
  then: 'Retry the same request with the same key shortly; it replays the first answer once there is one',
  message: () => 'A request with this Idempotency-Key is still being processed; retry shortly',
  example: {},
});

export const RATE_LIMITED = refusal<{ message: string }>({
  code: 'rate_limited',
  status: 429,
  when: 'Too many requests of this kind; the Retry-After header says how many seconds to wait',
  then: 'Wait the seconds of Retry-After, then retry',
  message: (f) => f.message,
  example: { message: 'Too many requests, try again in 45 seconds' },
});

export const PROVIDER_UNAVAILABLE = refusal<{ message: string }>({
  code: 'provider_unavailable',
  status: 503,
  when: 'A provider (payments, KYC, identity) could not be reached; nothing was started',
  then: 'Retry after Retry-After, with the same Idempotency-Key where the operation takes one',
  message: (f) => f.message,
  example: { message: 'The payment provider is unavailable; nothing was charged' },
});

/** A provider out of reach: the 503 with the Retry-After a client waits (nothing was started). */
export const providerUnavailable = (message: string) =>
  PROVIDER_UNAVAILABLE.error({ message }, { headers: retryAfterHeader(PROVIDER_RETRY_AFTER_SECONDS) });

export const SERVICE_UNAVAILABLE = refusal({
  code: 'service_unavailable',
  status: 503,
  when: 'The database was briefly out of reach, or the request ran out of time; it may have taken effect',
  then: 'Retry after Retry-After with the same Idempotency-Key (which replays the outcome), or read the state first',
  message: () => 'The service is briefly unavailable; try again in a few seconds',
  example: {},
});

export const INTERNAL_ERROR = refusal({
  code: 'internal_error',
  status: 500,
  when: 'Something failed that is not the request; the log has it under the request_id of the body',
  then: 'Retry later; if it persists, report the request_id',
  message: () => 'Internal error',
  example: {},
});

/** Every refusal core answers by itself, for the catalog. */
export const CORE_REFUSALS = [
  VALIDATION_FAILED,
  UNAUTHENTICATED,
  INVALID_SIGNATURE,
  FUNCTION_NOT_FOUND,
  METHOD_NOT_ALLOWED,
  PAYLOAD_TOO_LARGE,
  IDEMPOTENCY_KEY_REUSED,
  IDEMPOTENCY_IN_PROGRESS,
  RATE_LIMITED,
  PROVIDER_UNAVAILABLE,
  SERVICE_UNAVAILABLE,
  INTERNAL_ERROR,
] as const;
