// The response envelope and typed errors shared by every function.

export interface FieldProblem {
  field: string;
  message: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: FieldProblem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, details?: FieldProblem[]) => new HttpError(400, message, details);
export const invalidField = (field: string, message: string) =>
  new HttpError(400, 'Validation failed', [{ field, message }]);
export const unauthorized = (message = 'Missing or invalid access token') => new HttpError(401, message);
export const notFound = (message = 'Not found') => new HttpError(404, message);
export const conflict = (message: string, details?: FieldProblem[]) => new HttpError(409, message, details);
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

export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests, try again later') =>
  new HttpError(429, message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/** A JSON answer. Its text ends with a newline, so that answers printed one after another (curl -s) stay on their own lines. */
/** Seconds a client is told to wait after a provider was unavailable. */
export const PROVIDER_RETRY_AFTER_SECONDS = 5;

/** A provider (payments, KYC, identity) could not be reached: 503 with Retry-After, nothing started. */
export const providerUnavailable = (message: string) =>
  new HttpError(503, message, undefined, { 'Retry-After': String(PROVIDER_RETRY_AFTER_SECONDS) });

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(`${JSON.stringify(body)}\n`, {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  });
}

/**
 * What the functions server answers for a name with no function (scripts/lib/server.ts), and what
 * an admin endpoint answers anyone who is not an admin: the same status, body and headers, so the
 * two cannot be told apart.
 */
export function functionNotFound(name: string, allowOrigin: string): Response {
  return jsonResponse(404, errorBody(404, `No function named ${name}`), { 'Access-Control-Allow-Origin': allowOrigin });
}

export function successBody(status: number, data: unknown) {
  return { success: true as const, status, data };
}

export function errorBody(status: number, error: string, details?: FieldProblem[]) {
  return details && details.length > 0
    ? { success: false as const, status, error, details }
    : { success: false as const, status, error };
}
