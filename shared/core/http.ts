// The response envelope and typed refusals shared by every function. A refusal is an answer the
// client can act on: its status, a stable machine-readable `code` (snake_case, never renamed once
// shipped), a sentence for people and, for invalid input, each field. Codes are declared once, as
// Refusal objects (refusal() below), by core for what every endpoint can answer
// (shared/core/refusals.ts) and by the catalog for the rest (shared/refusals/catalog.ts);
// docs/errors.md lists them all.

import { JsonText } from './json-text.ts';

export interface FieldProblem {
  field: string;
  message: string;
  /** A code for this field's problem, when it has one of its own (e.g. kyc_limit_exceeded). */
  code?: string;
}

/** The statuses a refusal or failure may have. */
export type RefusalStatus = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 422 | 429 | 500 | 502 | 503;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldProblem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** What a refusal's message is made from: ids, amounts in kobo, counts, states; never sentences. */
export type Facts = object;

export interface RefusalSpec<F extends Facts> {
  code: string;
  status: RefusalStatus;
  /** When the service answers it: the document's description of the code. */
  when: string;
  /** What a client should do about it (docs/errors.md). */
  then: string;
  /** The sentence for people, from the facts. */
  message: (facts: F) => string;
  /** Facts of a typical case: the document's example body and docs/errors.md's example. */
  example: F;
  /** The `details` items the answer carries, when the refusal is about fields. */
  details?: (facts: F) => FieldProblem[];
  /** `details` of the example, when the caller passes them (validation problems). */
  exampleDetails?: FieldProblem[];
}

/** A refusal a service can answer: `error(facts)` is the HttpError to throw. */
export interface Refusal<F extends Facts = Facts> extends Readonly<RefusalSpec<F>> {
  error(facts: F, opts?: { details?: FieldProblem[]; headers?: Record<string, string> }): HttpError;
}

/** Declares a refusal (its code, status, words and advice); see the catalogs named above. */
export function refusal<F extends Facts = Record<never, never>>(spec: RefusalSpec<F>): Refusal<F> {
  return Object.freeze({
    ...spec,
    error: (facts: F, opts: { details?: FieldProblem[]; headers?: Record<string, string> } = {}) =>
      new HttpError(spec.status, spec.code, spec.message(facts), opts.details ?? spec.details?.(facts), opts.headers),
  });
}

// deno-lint-ignore no-explicit-any
export type AnyRefusal = Refusal<any>;

/** A wait in words, for 429 messages: '45 seconds', '3 minutes', '2 hours 5 minutes'. */
export function describeWait(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (s < 60) return unit(s, 'second');
  const minutes = Math.ceil(s / 60);
  if (minutes <= 60) return unit(minutes, 'minute');
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? unit(h, 'hour') : `${unit(h, 'hour')} ${unit(m, 'minute')}`;
}

/** The Retry-After header of a 429, in whole seconds (at least 1). */
export const retryAfterHeader = (seconds: number) => ({ 'Retry-After': String(Math.max(1, Math.ceil(seconds))) });

/** Seconds a client is told to wait after a provider was unavailable. */
export const PROVIDER_RETRY_AFTER_SECONDS = 5;

/**
 * Headers on every answer of every function, errors included: a browser never guesses another type
 * than the one sent (an answer holding user text is never run as a script or a page).
 */
export const ALWAYS_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'X-Content-Type-Options': 'nosniff' });

/** A JSON answer. Its text ends with a newline, so that answers printed one after another (curl -s) stay on their own lines. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(`${body instanceof JsonText ? body.text : JSON.stringify(body)}\n`, {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers, ...ALWAYS_HEADERS },
  });
}

/**
 * What the functions server answers for a name with no function (scripts/lib/server.ts), and what
 * an admin endpoint answers anyone who is not an admin: the same status, body and headers, so the
 * two cannot be told apart.
 */
export function functionNotFound(name: string, allowOrigin: string | undefined): Response {
  return jsonResponse(
    404,
    errorBody(404, 'function_not_found', `No function named ${name}`),
    allowOrigin === undefined ? { Vary: 'Origin' } : { 'Access-Control-Allow-Origin': allowOrigin, Vary: 'Origin' },
  );
}

/**
 * The Access-Control-Allow-Origin of an answer under CORS_ALLOW_ORIGIN (`setting`): `*` when the
 * setting is `*`; else the request's Origin when it is one of the setting's comma-separated
 * origins, and no header at all (undefined) when it is not, so a browser on another origin reads
 * nothing.
 */
export function allowedOrigin(setting: string, requestOrigin: string | null): string | undefined {
  if (setting.trim() === '*') return '*';
  if (requestOrigin === null) return undefined;
  return setting.split(',').some((o) => o.trim() === requestOrigin) ? requestOrigin : undefined;
}

export function successBody(status: number, data: unknown) {
  return { success: true as const, status, data };
}

/** The same envelope as successBody, as JSON text around `data` already written as JSON text. */
export function successText(status: number, data: JsonText): JsonText {
  return new JsonText(`{"success":true,"status":${status},"data":${data.text}}`);
}

export function errorBody(status: number, code: string, error: string, details?: FieldProblem[]) {
  return details && details.length > 0
    ? { success: false as const, status, code, error, details }
    : { success: false as const, status, code, error };
}
