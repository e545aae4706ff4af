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
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests, try again later') =>
  new HttpError(429, message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  });
}

export function successBody(status: number, data: unknown) {
  return { success: true as const, status, data };
}

export function errorBody(status: number, error: string, details?: FieldProblem[]) {
  return details && details.length > 0
    ? { success: false as const, status, error, details }
    : { success: false as const, status, error };
}
