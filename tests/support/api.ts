// deno-lint-ignore-file no-explicit-any -- answers of the real server are read as untyped JSON here
// Real HTTP calls to the running functions server. Every success answer is checked against the
// endpoint's response schema (./responses.ts) before the test sees it.
import { expect, inject } from 'vitest';
import { checkSuccessBody } from './responses.ts';

export const baseUrl = () => inject('baseUrl');

export interface ApiResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: string | Uint8Array;
  token?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
}

export async function call<T = any>(name: string, opts: CallOptions = {}): Promise<ApiResult<T>> {
  const url = new URL(`${baseUrl()}/${name}`);
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let body: string | Uint8Array | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] = 'application/json';
  }
  const method = opts.method ?? (opts.body !== undefined || opts.rawBody !== undefined ? 'POST' : 'GET');
  const res = await fetch(url, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* keep text */
  }
  await checkSuccessBody(name, res.status, parsed, method, res.headers);
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export const post = <T = any>(name: string, body: unknown, opts: Omit<CallOptions, 'body'> = {}) =>
  call<T>(name, { ...opts, method: opts.method ?? 'POST', body });
export const patch = <T = any>(name: string, body: unknown, opts: Omit<CallOptions, 'body'> = {}) =>
  call<T>(name, { ...opts, method: 'PATCH', body });
export const get = <T = any>(name: string, opts: Omit<CallOptions, 'body'> = {}) =>
  call<T>(name, { ...opts, method: 'GET' });

/** The fields named in a 400's details, for concise assertions. */
export const fieldsOf = (r: ApiResult) => ((r.body?.details ?? []) as { field: string }[]).map((d) => d.field).sort();

/** A success envelope with this status; returns its data. */
export function expectOk(res: ApiResult, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  expect(res.body.status).toBe(status);
  return res.body.data;
}

/** An error envelope with this status (no data); returns the fields named in its details. */
export function expectError(res: ApiResult, status: number): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.status).toBe(status);
  expect(typeof res.body.error).toBe('string');
  expect(res.body).not.toHaveProperty('data');
  return fieldsOf(res);
}

/** An answer with this HTTP status and the envelope that goes with it. */
export function expectStatus(r: ApiResult, status: number) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ success: status < 400, status });
}

/** The one answer for a wrong, expired, used or burnt code (signup verify, password reset). */
export function expectOtpCodeRejected(res: ApiResult): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({
    success: false,
    status: 400,
    error: 'Validation failed',
    details: [{ field: 'otp_code', message: 'is invalid or has expired' }],
  });
}
