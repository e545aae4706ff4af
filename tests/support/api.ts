// deno-lint-ignore-file no-explicit-any -- the untyped form (a function's name, not its definition) reads answers as untyped JSON
// Real HTTP calls to the running functions server. Every success answer is checked against the
// endpoint's response schema (./responses.ts) before the test sees it.
//
// Two forms. Typed: pass the endpoint's definition (the default export of its handler.ts), and the
// request body is typed by its body schema (z.input), the query's keys by its query schema, and the
// answer's `data` by its response schema (z.input: the JSON the client receives); the URL comes from
// the definition's name. A test that sends an invalid body on purpose marks it with
// `// @ts-expect-error <why>`. Untyped: pass the name; `postRaw` sends bytes that are not JSON at all.
import type { z } from 'zod';
import { expect, inject } from 'vitest';
import type { Handler, Method } from '../../shared/core/endpoint.ts';
import { checkSuccessBody } from './responses.ts';

export const baseUrl = () => inject('baseUrl');

export interface ApiResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A problem named in a 400's details. */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * The envelope of an answer: `data` on a success (checked against the response schema by
 * ./responses.ts), `error` and, on most 400s, `details` on a refusal (checked against the OpenAPI
 * document). One type for both, so a test reads what it asserted the status to be; what is absent
 * from the answer it received is undefined at run time.
 */
export interface Envelope<D> {
  success: boolean;
  status: number;
  data: D;
  /** The refusal's code (docs/errors.md). */
  code: string;
  error: string;
  details: FieldProblem[];
}

/** An endpoint definition: the default export of supabase/functions/<name>/handler.ts. */
export type Endpoint = Handler;

type Meta<D extends Endpoint> = D['meta'];
/** Without a body schema: no body, or an empty object (what clients commonly send). */
type InputOf<S> = S extends z.ZodType ? z.input<S> : Record<string, never> | undefined;

/** The request body an endpoint accepts (z.input of its body schema). */
export type BodyOf<D extends Endpoint> = InputOf<Meta<D>['body']>;
/** The `data` of an endpoint's success answer, as JSON (z.input of its response schema). */
export type DataOf<D extends Endpoint> = Meta<D>['response'] extends z.ZodType ? z.input<Meta<D>['response']>
  : unknown;
/** An endpoint's query: its schema's keys; the values go into the URL as text. */
export type QueryOf<D extends Endpoint> = Meta<D>['query'] extends z.ZodType
  ? { [K in keyof z.input<Meta<D>['query']>]?: Scalar }
  : Record<string, never>;
/** What a typed call of endpoint D answers. */
export type Answer<D extends Endpoint> = ApiResult<Envelope<DataOf<D>>>;

type Scalar = string | number | boolean | undefined;

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: string | Uint8Array;
  token?: string;
  query?: Record<string, Scalar>;
  headers?: Record<string, string>;
}

/** The options of a typed call: the query's keys are the endpoint's. */
export interface TypedOptions<D extends Endpoint> {
  method?: Method | 'OPTIONS' | 'HEAD';
  token?: string;
  query?: QueryOf<D>;
  headers?: Record<string, string>;
}

const nameOf = (target: string | Endpoint) => (typeof target === 'string' ? target : target.meta.name);

async function send(name: string, opts: CallOptions): Promise<ApiResult<unknown>> {
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
  return { status: res.status, headers: res.headers, body: parsed };
}

export function call<D extends Endpoint>(
  endpoint: D,
  opts?: TypedOptions<D> & { body?: BodyOf<D> },
): Promise<Answer<D>>;
export function call<T = any>(name: string, opts?: CallOptions): Promise<ApiResult<T>>;
export function call(target: string | Endpoint, opts: CallOptions = {}): Promise<ApiResult<unknown>> {
  return send(nameOf(target), opts);
}

export function post<D extends Endpoint>(endpoint: D, body: BodyOf<D>, opts?: TypedOptions<D>): Promise<Answer<D>>;
export function post<T = any>(name: string, body: unknown, opts?: Omit<CallOptions, 'body'>): Promise<ApiResult<T>>;
export function post(target: string | Endpoint, body: unknown, opts: Omit<CallOptions, 'body'> = {}) {
  return send(nameOf(target), { ...opts, method: opts.method ?? 'POST', body });
}

export function patch<D extends Endpoint>(endpoint: D, body: BodyOf<D>, opts?: TypedOptions<D>): Promise<Answer<D>>;
export function patch<T = any>(name: string, body: unknown, opts?: Omit<CallOptions, 'body'>): Promise<ApiResult<T>>;
export function patch(target: string | Endpoint, body: unknown, opts: Omit<CallOptions, 'body'> = {}) {
  return send(nameOf(target), { ...opts, method: 'PATCH', body });
}

export function get<D extends Endpoint>(endpoint: D, opts?: TypedOptions<D>): Promise<Answer<D>>;
export function get<T = any>(name: string, opts?: Omit<CallOptions, 'body'>): Promise<ApiResult<T>>;
export function get(target: string | Endpoint, opts: Omit<CallOptions, 'body'> = {}) {
  return send(nameOf(target), { ...opts, method: 'GET' });
}

/**
 * Explicitly untyped: sends `rawBody` as it is (bytes or text that need not be JSON), or a body no
 * schema describes, to the endpoint. The answer is checked as every other.
 */
export function postRaw(
  target: string | Endpoint,
  rawBody: string | Uint8Array,
  opts: Omit<CallOptions, 'body' | 'rawBody'> = {},
): Promise<ApiResult<Envelope<unknown>>> {
  return send(nameOf(target), { ...opts, method: opts.method ?? 'POST', rawBody }) as Promise<
    ApiResult<Envelope<unknown>>
  >;
}

/** The fields named in a 400's details, for concise assertions. */
export const fieldsOf = (r: ApiResult) => ((r.body?.details ?? []) as { field: string }[]).map((d) => d.field).sort();

/** A success envelope with this status; returns its data. */
export function expectOk<R extends ApiResult>(res: R, status = 200): R['body']['data'] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  expect(res.body.status).toBe(status);
  return res.body.data;
}

/** An error envelope with this status (no data); returns the fields named in its details. */
export function expectError(res: ApiResult, status: number, code?: string): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (code !== undefined) expect(res.body.code, JSON.stringify(res.body)).toBe(code);
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
  expect(res.status, JSON.stringify(res.body)).toBe(409);
  expect(res.body).toEqual({
    success: false,
    status: 409,
    code: 'otp_invalid',
    error: 'The code is invalid or has expired',
    details: [{ field: 'otp_code', message: 'is invalid or has expired' }],
  });
}
