// The endpoint builder: every function is `endpoint({...})`, which gives it the same behaviour
// for CORS and OPTIONS, method checks (405 + Allow), the 1 MiB body limit (413), JSON parsing,
// strict zod validation of query and body (400 with details), authentication by the endpoint's
// auth mode (an area defines each: shared/auth/session.ts has the user session and the admin),
// typed errors, request ids and the response envelope. The `response`
// schema describes the envelope's `data` and types the handler's result; it is not checked at run
// time (the test helpers check every real answer against it: tests/support/responses.ts).
import type { z } from 'zod';
import { ConfigError, getConfig } from './config.ts';
import { isDatabaseUnavailable } from './db.ts';
import {
  allowedOrigin,
  ALWAYS_HEADERS,
  type AnyRefusal,
  errorBody,
  type Facts,
  functionNotFound,
  HttpError,
  jsonResponse,
  successBody,
  successText,
} from './http.ts';
import {
  CORE_REFUSALS,
  INTERNAL_ERROR,
  METHOD_NOT_ALLOWED,
  PAYLOAD_TOO_LARGE,
  SERVICE_UNAVAILABLE,
  UNAUTHENTICATED,
  VALIDATION_FAILED,
} from './refusals.ts';
import { errorMessage, log } from './log.ts';
import { controlCharacterProblems, queryObject, wellFormed, zodDetails } from './validation.ts';
import { type SecretShownOnce, type StoredResponse, withIdempotency } from './idempotency.ts';
import type { ClaimMode } from './key-claim.ts';
import { JsonText } from './json-text.ts';
import { afterResponse } from './background.ts';
import { wakeListeners } from './wake.ts';

/** What a handler's run answers: a stored response, or (GET only, never stored) an event stream. */
type Outcome = StoredResponse & { stream?: ReadableStream<Uint8Array> };

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The deepest nesting of arrays and objects a JSON body may have. Deeper bodies are refused before
 * they are parsed: every walk over a parsed body (the control rule, zod) recurses, and 3,000 levels
 * in 6 KB exhausted the stack (a 500). No request of the API nests more than a few levels.
 */
export const MAX_JSON_DEPTH = 32;

/** The longest a request waits before it is answered 503 (Paystack's adapter gives up at 15 s). */
export const REQUEST_DEADLINE_MS = 25_000;

/**
 * A handler result that is a stream of Server-Sent Events (`text/event-stream`) instead of JSON:
 * the endpoint declares `stream`, and answers 200 with this body; refusals before it are still
 * the JSON error envelope.
 */
export class EventStream {
  constructor(readonly body: ReadableStream<Uint8Array>) {}
}

/** The headers of an event stream's answer: never cached, never buffered by a proxy. */
const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
};

/** A handler result with its own status (e.g. 200 instead of 201 when nothing was created). */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly data: T,
  ) {}
}

/**
 * SQL functions refuse with SQLSTATE ES<http status> and, in DETAIL, the facts of the refusal as
 * JSON `{code, ...facts}` (docs/errors.md#refusals-raised-in-sql); the endpoint's declared refusal of
 * that code words it. An ended session (ES401, raised by the first statement of a request) is the
 * 401 every bearer endpoint answers. Null when the error is not a refusal; a refusal whose code the
 * endpoint does not declare is logged and answered as an internal error (the document lists every
 * code an operation answers, so an undeclared one is a bug).
 */
export function sqlRefusal(route: { name: string; refusals: ReadonlyMap<string, AnyRefusal> }, err: unknown) {
  const e = err as { code?: string; detail?: string } | null;
  if (typeof e?.code !== 'string' || !/^ES\d{3}$/.test(e.code)) return null;
  if (e.code === 'ES401') return UNAUTHENTICATED.error({ reason: 'ended' });
  const facts = sqlFacts(e.detail);
  const declared = facts ? route.refusals.get(String(facts.code)) : undefined;
  if (!declared) {
    // no facts (a ledger invariant, a bug) or a code this endpoint does not declare
    log.error('refusal.undeclared', { function: route.name, sqlstate: e.code, code: facts?.code ?? null });
    return null;
  }
  return declared.error(facts as Facts);
}

/** The facts of a SQL refusal's DETAIL, or null when it has none. */
function sqlFacts(detail: string | undefined): (Facts & { code: unknown }) | null {
  if (typeof detail !== 'string' || !detail.startsWith('{')) return null;
  try {
    const facts: unknown = JSON.parse(detail);
    return facts && typeof facts === 'object' && 'code' in facts ? facts as Facts & { code: unknown } : null;
  } catch {
    return null;
  }
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Whoever an auth mode found calling: its id keys the caller's Idempotency-Keys. */
export interface Caller {
  id: string;
}

/**
 * How the OpenAPI document declares an auth mode: the security scheme's name and its definition
 * (an OpenAPI Security Scheme Object). A mode that declares none is the session's bearer token.
 */
export interface AuthScheme {
  readonly name: string;
  readonly definition: Readonly<Record<string, string>>;
}

/**
 * How an endpoint finds its caller. Core defines no mode: an area does (shared/auth/session.ts: the
 * user session and the admin; shared/merchants/key-auth.ts: a merchant's API key; operators
 * later), and an endpoint names the one it uses (`auth: userSession`), or 'none' for public
 * endpoints and webhooks.
 */
export interface AuthMode<C extends Caller = Caller> {
  /** What the document and the README call it ('user', 'admin'). */
  readonly name: string;
  /** Its security scheme in the document; unset: the session's bearer token. */
  readonly scheme?: AuthScheme;
  /**
   * What `identify` answers beyond the 401 of no caller (a key's rate limit), for the document's
   * list of each endpoint's refusals.
   */
  readonly refusals?: Refusals;
  /**
   * false: the caller is identified after the method and the body's size are checked, and
   * `identify` refuses with its own HttpError (a 401). true: the caller is identified first, and
   * anyone `identify` answers null for gets the 404 of a function that does not exist, whatever
   * the method and body, so nothing tells them the endpoint exists (docs/security.md#operators).
   */
  readonly hidden: boolean;
  /** The roles the mode admits, when it admits only some (the operator modes); unset: any caller. */
  readonly roles?: readonly string[];
  /** The caller of a request; null: no caller (a 404 when hidden, else a 401). */
  identify(req: Request): Promise<C | null>;
  /** Runs the rest of the request (parsing, handler, answer) in the caller's scope, when the mode has one. */
  within?<T>(caller: C, run: () => Promise<T>): Promise<T>;
}

/** An endpoint's auth: a mode (of whatever caller type it declares), or 'none'. */
// deno-lint-ignore no-explicit-any
export type Auth = AuthMode<any> | 'none';

/** The caller a handler receives under auth A. */
export type CallerOf<A extends Auth> = A extends AuthMode<infer C> ? C : undefined;

export interface Context<Q, B, A extends Auth> {
  req: Request;
  requestId: string;
  clientIp: string;
  query: Q;
  body: B;
  rawBody: Uint8Array;
  user: CallerOf<A>;
}

/** The parsed value of an optional schema: what the handler receives as `query` or `body`. */
type Parsed<S extends z.ZodType | undefined> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * What a handler may return: the `data` of the success envelope in its wire form, `z.input` of the
 * response schema (the JSON a client receives is parsed by that schema), or a Reply carrying it
 * with another status. Without a response schema (only toy endpoints in tests), anything.
 */
export type HandlerResult<RS extends z.ZodType | undefined> = RS extends z.ZodType
  ? z.input<RS> | Reply<z.input<RS>> | JsonText<z.input<RS>>
  : unknown;

/**
 * Headers a `verify` function checks instead of a bearer token (a provider's webhook signature, the
 * scheduler's secret): what the OpenAPI document declares as the operation's security. The verify
 * function reads the header names from the same object, so the document cannot drift from it.
 */
export interface HeaderAuth {
  /** The security scheme's name in the document (e.g. paystackSignature). */
  scheme: string;
  description: string;
  headers: readonly { name: string; required: boolean; description: string }[];
}

/** The refusals a handler (or the SQL it calls) can answer, from the catalog (shared/refusals/catalog.ts). */
export type Refusals = readonly AnyRefusal[];

export interface EndpointSpec<
  QS extends z.ZodType | undefined,
  BS extends z.ZodType | undefined,
  RS extends z.ZodType | undefined,
  A extends Auth,
> {
  name: string;
  /** One line for the API reference: what the operation does. */
  summary?: string;
  /** More for the API reference (Markdown): rules, bounds, what comes next. */
  description?: string;
  method: Method;
  auth: A;
  query?: QS;
  body?: BS;
  /** The `data` of the success envelope (z.strictObject, nullable where a field can be null). */
  response?: RS;
  /** 200 by default; 201 for creations; 202 for an action that always waits for a second operator. */
  status?: 200 | 201 | 202;
  /**
   * Honour the Idempotency-Key header (money-moving and creating POSTs; needs an auth mode): true
   * runs the request as one transaction with its key and answer; 'provider' (the handler calls a
   * provider) commits the key with the first transaction and the answer after; a function of the
   * parsed body chooses per request (shared/core/idempotency.ts).
   */
  idempotent?: boolean | 'provider' | ((body: z.output<NonNullable<BS>>) => ClaimMode);
  /**
   * A field of the success answer's `data` that is a secret shown once (an escrow's invite token):
   * the answer stored under an Idempotency-Key holds null there, and a replay derives the same
   * secret again from the caller and the key (the operation made it that way).
   */
  secretShownOnce?: SecretShownOnce;
  /**
   * Why `idempotent` is what it is: what the same request sent again does (the README's
   * Idempotency-Key table is generated from it). Every POST or PATCH with an auth mode says it.
   */
  repeat?: string;
  /**
   * Answer 503 after REQUEST_DEADLINE_MS (the default, true) or wait for the handler however long
   * it takes (false: the scheduler's job run, whose work is not a client's request).
   */
  deadline?: boolean;
  /** Runs on the raw bytes before any parsing (webhook signatures). Throw HttpError to refuse. */
  verify?: (req: Request, rawBody: Uint8Array) => Promise<void>;
  /** The headers `verify` checks, for the OpenAPI document (auth 'none' only). */
  signedBy?: HeaderAuth;
  /**
   * The refusals the handler and the SQL it calls answer (beyond those every endpoint of its kind
   * answers: scripts/lib/spec/openapi.ts builderRefusals). The document lists each code under its
   * status, and every answer the test suites receive must be one the document declares
   * (tests/support/responses.ts), so a missing one fails a test.
   */
  refusals?: Refusals;
  /**
   * The endpoints whose actions this one performs with their own code (admin-approval-decide
   * performs what admin-charge-resolve and the others asked for): a refusal this endpoint declares
   * because one of them does is answered by the same code, and a test receiving it from either
   * covers it (scripts/lib/refusal-coverage.ts).
   */
  performsFor?: readonly string[];
  /** Success statuses other than `status` the handler answers with a Reply (e.g. 200 for an existing card). */
  alsoSucceedsWith?: readonly { status: 200 | 201 | 202; description: string }[];
  /**
   * The answer is a stream of Server-Sent Events (the handler returns an EventStream): what the
   * document says of its events, and the schemas of their `data` by event name.
   */
  stream?: { description: string; events: Readonly<Record<string, z.ZodType>>; example: string };
  /**
   * false: the handler's result is the whole JSON body, without the envelope (only the OpenAPI
   * document, whose readers expect the bare document). The response schema then describes the body.
   */
  envelope?: false;
  handler: (ctx: Context<Parsed<QS>, Parsed<BS>, A>) => Promise<HandlerResult<RS>>;
}

/**
 * What an endpoint is, for tests and generators (README table, OpenAPI). name, method, auth and
 * status are plain enumerable fields (what the local server prints); the rest (idempotent, the
 * document's texts and statuses, the three schemas) is read-only and non-enumerable, so that
 * printing, spreading or comparing a meta shows the route, not whole zod schemas.
 */
export interface EndpointMeta<
  QS extends z.ZodType | undefined = z.ZodType | undefined,
  BS extends z.ZodType | undefined = z.ZodType | undefined,
  RS extends z.ZodType | undefined = z.ZodType | undefined,
> {
  readonly name: string;
  readonly method: Method;
  /** The auth mode's name, or 'none'. */
  readonly auth: string;
  /** The auth mode answers a caller it refuses with the 404 of a missing function. */
  readonly authHidden: boolean;
  /** The auth mode's security scheme in the document (unset: the session's bearer token). */
  readonly authScheme: AuthScheme | undefined;
  /** What the auth mode refuses with beyond a 401 (AuthMode.refusals). */
  readonly authRefusals: Refusals;
  /** The roles the auth mode admits (AuthMode.roles; unset: any caller it identifies). */
  readonly authRoles: readonly string[] | undefined;
  readonly status: number;
  readonly idempotent: boolean;
  readonly repeat: string | undefined;
  readonly summary: string | undefined;
  readonly description: string | undefined;
  readonly signedBy: HeaderAuth | undefined;
  readonly refusals: Refusals;
  readonly alsoSucceedsWith: readonly { status: 200 | 201 | 202; description: string }[] | undefined;
  /** EndpointSpec.performsFor. */
  readonly performsFor: readonly string[] | undefined;
  readonly envelope: boolean;
  readonly stream: { description: string; events: Readonly<Record<string, z.ZodType>>; example: string } | undefined;
  readonly query: QS;
  readonly body: BS;
  readonly response: RS;
}

export type Handler<
  QS extends z.ZodType | undefined = z.ZodType | undefined,
  BS extends z.ZodType | undefined = z.ZodType | undefined,
  RS extends z.ZodType | undefined = z.ZodType | undefined,
> = ((req: Request) => Promise<Response>) & { meta: EndpointMeta<QS, BS, RS> };

/** The CORS headers of an answer to a request from `origin` (allowedOrigin: CORS_ALLOW_ORIGIN's list). */
function corsHeaders(method: Method, origin: string | null): Record<string, string> {
  const allow = allowedOrigin(getConfig().CORS_ALLOW_ORIGIN, origin);
  return {
    ...(allow === undefined ? {} : { 'Access-Control-Allow-Origin': allow }),
    'Access-Control-Allow-Methods': `${method}, OPTIONS`,
    'Access-Control-Allow-Headers':
      'authorization, x-client-info, apikey, content-type, idempotency-key, x-request-id, last-event-id',
    'Access-Control-Expose-Headers': 'x-request-id, retry-after, idempotent-replayed',
    'Access-Control-Max-Age': '86400',
    Vary: 'Origin',
  };
}

async function readBody(req: Request): Promise<Uint8Array> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw PAYLOAD_TOO_LARGE.error({});
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (err) {
      // the client went away mid-body, or (the local server) took too long to send it: nothing of
      // ours failed, so no error line and no 500; the answer, if anyone still reads it, is a 400
      log.info('request.body_incomplete', { error: errorMessage(err) });
      throw VALIDATION_FAILED.error({ part: 'body' }, {
        details: [{ field: 'body', message: 'was not received in full' }],
      });
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw PAYLOAD_TOO_LARGE.error({});
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/**
 * True when the JSON text nests arrays and objects deeper than `max`: one pass over the bytes,
 * counting `[` and `{` against `]` and `}` outside strings (a backslash escapes the next byte in a
 * string). These are ASCII bytes, never part of a multi-byte UTF-8 character, so the bytes can be
 * read as they came. Malformed text is left to the parser.
 */
export function jsonTooDeep(raw: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (inString) {
      if (b === 0x5c) i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) {
      inString = true;
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth > max) return true;
    } else if (b === 0x5d || b === 0x7d) {
      depth--;
    }
  }
  return false;
}

function parseJson(raw: Uint8Array): unknown {
  if (raw.byteLength === 0) return undefined;
  if (jsonTooDeep(raw)) {
    throw VALIDATION_FAILED.error({ part: 'body' }, {
      details: [{ field: 'body', message: `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }],
    });
  }
  try {
    return wellFormed(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)));
  } catch {
    throw VALIDATION_FAILED.error({ part: 'json' }, { details: [{ field: 'body', message: 'must be valid JSON' }] });
  }
}

/**
 * The client's address for per-address rate limits. X-Forwarded-For is a list each proxy appends
 * to, so only entries added by our own proxies can be trusted: with TRUSTED_PROXY_HOPS = n the
 * address is the n-th entry from the right (1: the one the platform's edge appended). Entries a
 * client wrote itself sit further left and are ignored.
 */
export function clientAddress(req: Request, trustedHops = getConfig().TRUSTED_PROXY_HOPS): string {
  const entries = (req.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries[entries.length - trustedHops] ?? entries[0] ?? 'unknown';
}

/**
 * What the steps below read of an endpoint's spec, its schemas and handler without the endpoint's
 * type parameters: endpoint() checked them against one another, the steps only pass values along.
 */
interface Route {
  name: string;
  method: Method;
  mode: AuthMode<Caller> | undefined;
  successStatus: number;
  deadline: boolean;
  idempotent: boolean;
  /** How the Idempotency-Key is claimed for this request (its parsed body). */
  claimMode: (body: unknown) => ClaimMode;
  secretShownOnce: SecretShownOnce | undefined;
  envelope: boolean;
  query: z.ZodType | undefined;
  body: z.ZodType | undefined;
  verify: ((req: Request, rawBody: Uint8Array) => Promise<void>) | undefined;
  /** The declared refusals by code, core's included: how a SQL refusal's code finds its words. */
  refusals: ReadonlyMap<string, AnyRefusal>;
  handler: (ctx: Context<unknown, unknown, Auth>) => Promise<unknown>;
}

/** A request as far as the steps before the handler took it. */
interface Incoming {
  req: Request;
  requestId: string;
  /** CORS and x-request-id: on every answer from here on. */
  headers: Record<string, string>;
  rawBody: Uint8Array;
  /** The caller the auth mode found; undefined under auth 'none'. */
  user: Caller | undefined;
}

export function endpoint<
  QS extends z.ZodType | undefined = undefined,
  BS extends z.ZodType | undefined = undefined,
  RS extends z.ZodType | undefined = undefined,
  A extends Auth = Auth,
>(spec: EndpointSpec<QS, BS, RS, A>): Handler<QS, BS, RS> {
  const route: Route = {
    name: spec.name,
    method: spec.method,
    mode: spec.auth === 'none' ? undefined : (spec.auth as AuthMode<Caller>),
    successStatus: spec.status ?? 200,
    deadline: spec.deadline !== false,
    idempotent: spec.idempotent !== undefined && spec.idempotent !== false,
    claimMode: claimModeOf(spec.idempotent as Route['claimMode'] | boolean | 'provider' | undefined),
    secretShownOnce: spec.secretShownOnce,
    envelope: spec.envelope !== false,
    query: spec.query,
    body: spec.body,
    verify: spec.verify,
    refusals: new Map(
      [...CORE_REFUSALS, ...(authRefusalsOf(spec.auth)), ...(spec.refusals ?? [])].map((r) => [r.code, r]),
    ),
    // query and body are parsed by spec.query and spec.body, and user is set by spec.auth's mode
    handler: spec.handler as Route['handler'],
  };
  const handler = (req: Request): Promise<Response> =>
    withDeadline(route, req, (requestId) => respond(route, req, requestId));
  return Object.assign(handler, { meta: endpointMeta(spec, route) });
}

/** What an endpoint's auth mode refuses with beyond a 401. */
const authRefusalsOf = (auth: Auth): Refusals => (auth === 'none' ? [] : (auth.refusals ?? []));

/**
 * The path of a request, top to bottom. The configuration, OPTIONS; then a hidden mode's caller
 * (before anything else is looked at), the method, the body (read and size), verify on the raw
 * bytes, the caller of a mode that is not hidden; the rest (query, body schema, idempotency, the
 * handler, the answer) runs in the caller's scope when the mode has one (`within`: the user
 * session's live check). A refusal on the way is answered by `failure`.
 */
async function respond(route: Route, req: Request, requestId: string): Promise<Response> {
  const refused = configurationRefused(route, requestId);
  if (refused) return refused;
  const headers = { ...corsHeaders(route.method, req.headers.get('origin')), 'x-request-id': requestId };
  if (req.method === 'OPTIONS') return new Response(null, { status: 204, headers: { ...headers, ...ALWAYS_HEADERS } });
  try {
    // A hidden mode (the admin's) checks its caller first: before the method, the body's size, the
    // query and the body, so a caller it refuses learns nothing from any of them.
    const early = route.mode?.hidden ? await route.mode.identify(req) : undefined;
    if (early === null) {
      return functionNotFound(route.name, allowedOrigin(getConfig().CORS_ALLOW_ORIGIN, req.headers.get('origin')));
    }
    checkMethod(route, req);
    const rawBody = route.method === 'GET' ? new Uint8Array(0) : await readBody(req);
    if (route.verify) await route.verify(req, rawBody);
    const user = await authenticate(route, req, early);
    const incoming: Incoming = { req, requestId, headers, rawBody, user };
    const rest = () => afterAuth(route, incoming);
    return user && route.mode?.within ? await route.mode.within(user, rest) : await rest();
  } catch (err) {
    return failure(route, requestId, headers, err);
  }
}

/**
 * The deadline: every request gets an answer within REQUEST_DEADLINE_MS: past it, a 503 with
 * Retry-After (docs/performance.md, "Faults": a statement postgres.js never settles after Postgres
 * restarts). Work still under way goes on; an Idempotency-Key it holds stays claimed, and its
 * answer is kept for the retry if it ends.
 */
async function withDeadline(
  route: Route,
  req: Request,
  run: (requestId: string) => Promise<Response>,
): Promise<Response> {
  const requestId = crypto.randomUUID();
  if (!route.deadline) return await run(requestId);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Response>((resolve) => {
    timer = setTimeout(() => {
      log.warn('request.deadline', { function: route.name, request_id: requestId, after_ms: REQUEST_DEADLINE_MS });
      resolve(jsonResponse(503, errorBody(503, SERVICE_UNAVAILABLE.code, SERVICE_UNAVAILABLE.message({})), {
        ...corsHeaders(route.method, req.headers.get('origin')),
        'x-request-id': requestId,
        'Retry-After': '2',
      }));
    }, REQUEST_DEADLINE_MS);
  });
  try {
    return await Promise.race([run(requestId), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A deployment whose configuration is refused (docs/security.md) serves nothing: the log names the
 * variables (never their values), the client sees a plain 500. Null when the configuration is good.
 */
function configurationRefused(route: Route, requestId: string): Response | null {
  try {
    getConfig();
    return null;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.error('config.refused', { function: route.name, request_id: requestId, problems: err.problems });
    return jsonResponse(500, { ...internalErrorBody(), request_id: requestId }, {
      'x-request-id': requestId,
    });
  }
}

/** The method: anything but the endpoint's (OPTIONS was answered before) is a 405 with Allow. */
function checkMethod(route: Route, req: Request): void {
  if (req.method !== route.method) {
    throw METHOD_NOT_ALLOWED.error({ method: req.method, allowed: route.method }, {
      headers: { Allow: `${route.method}, OPTIONS` },
    });
  }
}

/**
 * The caller: a mode that is not hidden identifies it now (a hidden one did before the method, and
 * found `early`); no caller under a mode is a 401. Undefined under auth 'none'.
 */
async function authenticate(route: Route, req: Request, early: Caller | undefined): Promise<Caller | undefined> {
  const user = route.mode && !route.mode.hidden ? await route.mode.identify(req) : early;
  if (user === null) throw UNAUTHENTICATED.error({ reason: 'missing' });
  return user;
}

/** Everything after authentication: query, body, idempotency, the handler and the answer. */
async function afterAuth(route: Route, incoming: Incoming): Promise<Response> {
  const { req, requestId, rawBody, user } = incoming;
  const query = parseQuery(route, req);
  const body = parseBody(route, rawBody);
  const ctx: Context<unknown, unknown, Auth> = {
    req,
    requestId,
    clientIp: clientAddress(req),
    query,
    body,
    rawBody,
    user,
  };
  const result = await idempotently(route, incoming, body, () => runHandler(route, ctx));
  // a write's transactions have committed: the servers' live streams are woken to read the log
  if (route.method !== 'GET' && result.status < 500) afterResponse('events.wake', wakeListeners);
  return answer(result, incoming.headers);
}

/**
 * Idempotency: with an Idempotency-Key (endpoints marked idempotent, with a caller), the handler
 * runs once per key and body (withIdempotency: a replay, or a 409 on a different body); else it
 * simply runs.
 */
async function idempotently(
  route: Route,
  { req, rawBody, user }: Incoming,
  body: unknown,
  run: () => Promise<Outcome>,
): Promise<Outcome & { replayed: boolean }> {
  const key = route.idempotent && user ? req.headers.get('idempotency-key') : null;
  if (key === null || !user) return { ...(await run()), replayed: false };
  const mode = route.claimMode(body);
  const secret = route.secretShownOnce;
  return await withIdempotency({ userId: user.id, operation: route.name, key, rawBody, mode, secret }, run);
}

/** The spec's `idempotent` as a choice per request. */
function claimModeOf(
  spec: ((body: unknown) => ClaimMode) | boolean | 'provider' | undefined,
): (body: unknown) => ClaimMode {
  if (typeof spec === 'function') return spec;
  return spec === 'provider' ? () => 'provider' : () => 'atomic';
}

/** The answer: the result as JSON, a replay marked Idempotent-Replayed, a fresh one with its own headers. */
function answer(r: Outcome & { replayed: boolean }, headers: Record<string, string>): Response {
  if (r.stream) return new Response(r.stream, { status: r.status, headers: { ...headers, ...EVENT_STREAM_HEADERS } });
  return jsonResponse(
    r.status,
    r.body,
    r.replayed ? { ...headers, 'Idempotent-Replayed': 'true' } : { ...headers, ...(r.headers ?? {}) },
  );
}

/**
 * A query (as an object of its parameters) or a JSON body against the endpoint's schema: the
 * control rule on every string and key first, then the schema. A refusal is a 400 (HttpError)
 * naming each field. tests/unit/request-rules.test.ts checks the OpenAPI document against this.
 */
export function parseInput(schema: z.ZodType, input: unknown, root: 'query' | 'body'): unknown {
  const badText = controlCharacterProblems(input);
  if (badText.length > 0) throw VALIDATION_FAILED.error({ part: root }, { details: badText });
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    throw VALIDATION_FAILED.error({ part: root }, { details: zodDetails(parsed.error, root, input) });
  }
  return parsed.data;
}

/**
 * The query string: no control characters in any value; then the endpoint's schema, or, without
 * one, no parameter at all. Each refusal is a 400 naming the parameters.
 */
function parseQuery(route: Route, req: Request): unknown {
  const url = new URL(req.url);
  const rawQuery = queryObject(url);
  if (route.query) return parseInput(route.query, rawQuery, 'query');
  const badQuery = controlCharacterProblems(rawQuery);
  if (badQuery.length > 0) throw VALIDATION_FAILED.error({ part: 'query' }, { details: badQuery });
  if ([...url.searchParams.keys()].length > 0) {
    throw VALIDATION_FAILED.error({ part: 'query' }, {
      details: [...new Set(url.searchParams.keys())].map((k) => ({
        field: k,
        message: 'is not an accepted parameter',
      })),
    });
  }
  return undefined;
}

/**
 * The body schema: the JSON body (none reads as {}) without control characters, parsed by the
 * endpoint's schema; without one, no body but an empty one (nothing, null or {}).
 */
function parseBody(route: Route, rawBody: Uint8Array): unknown {
  if (route.body) {
    const json = parseJson(rawBody);
    return parseInput(route.body, json === undefined ? {} : json, 'body');
  }
  if (rawBody.byteLength > 0) {
    const json = parseJson(rawBody);
    const empty = json === null ||
      (typeof json === 'object' && !Array.isArray(json) && Object.keys(json as object).length === 0);
    if (!empty) {
      throw VALIDATION_FAILED.error({ part: 'no_body' }, { details: [{ field: 'body', message: 'must be empty' }] });
    }
  }
  return undefined;
}

/**
 * The handler, and its result as the answer to send (and keep, under an Idempotency-Key): the
 * envelope with its status, or the refusal it threw (an HttpError or a SQL function's ES<status>).
 * Anything else, and any 5xx, is thrown on to `failure`.
 */
async function runHandler(route: Route, ctx: Context<unknown, unknown, Auth>): Promise<Outcome> {
  try {
    const out: unknown = await route.handler(ctx);
    if (out instanceof EventStream) return { status: 200, body: null, stream: out.body };
    const status = out instanceof Reply ? out.status : route.successStatus;
    const data = out instanceof Reply ? out.data : out;
    // JSON text Postgres wrote goes into the envelope as it is (shared/core/json-text.ts)
    if (data instanceof JsonText && route.envelope) return { status, body: successText(status, data) };
    return { status, body: route.envelope ? successBody(status, data) : data };
  } catch (err) {
    const refused = err instanceof HttpError ? err : sqlRefusal(route, err);
    if (!refused || refused.status >= 500) throw err;
    if (!route.refusals.has(refused.code)) {
      log.error('refusal.undeclared', { function: route.name, code: refused.code });
    }
    return {
      status: refused.status,
      body: errorBody(refused.status, refused.code, refused.message, refused.details),
      headers: refused.headers,
    };
  }
}

/**
 * What a refusal or failure on the way is answered: an HttpError as itself, the database out of
 * reach as a 503 with Retry-After, anything else as a 500 with the request id, logged.
 */
function failure(route: Route, requestId: string, headers: Record<string, string>, err: unknown): Response {
  const fail = (e: HttpError) =>
    jsonResponse(e.status, errorBody(e.status, e.code, e.message, e.details), { ...headers, ...e.headers });
  if (err instanceof HttpError) return fail(err);
  if (isDatabaseUnavailable(err)) {
    // Postgres restarting or out of reach: nothing the client did; the same request (with its
    // Idempotency-Key) can be sent again shortly
    log.warn('request.database_unavailable', {
      function: route.name,
      request_id: requestId,
      error: errorMessage(err),
    });
    return fail(SERVICE_UNAVAILABLE.error({}, { headers: { 'Retry-After': '2' } }));
  }
  log.error('request.failed', { function: route.name, request_id: requestId, error: errorMessage(err) });
  return jsonResponse(500, { ...internalErrorBody(), request_id: requestId }, headers);
}

const internalErrorBody = () => errorBody(500, INTERNAL_ERROR.code, INTERNAL_ERROR.message({}));

/** The endpoint's meta: the route enumerable, the rest read-only and hidden (EndpointMeta). */
function endpointMeta<
  QS extends z.ZodType | undefined,
  BS extends z.ZodType | undefined,
  RS extends z.ZodType | undefined,
  A extends Auth,
>(spec: EndpointSpec<QS, BS, RS, A>, route: Route): EndpointMeta<QS, BS, RS> {
  const meta: EndpointMeta<QS, BS, RS> = {
    name: spec.name,
    method: spec.method,
    auth: route.mode ? route.mode.name : 'none',
    authHidden: route.mode?.hidden === true,
    authScheme: route.mode?.scheme,
    authRefusals: [...authRefusalsOf(spec.auth)],
    authRoles: route.mode?.roles,
    status: route.successStatus,
    idempotent: route.idempotent,
    repeat: spec.repeat,
    summary: spec.summary,
    description: spec.description,
    signedBy: spec.signedBy,
    refusals: [...(spec.refusals ?? [])],
    alsoSucceedsWith: spec.alsoSucceedsWith,
    performsFor: spec.performsFor,
    envelope: route.envelope,
    stream: spec.stream,
    // an omitted schema is undefined, and so is its type parameter (the defaults above)
    query: spec.query as QS,
    body: spec.body as BS,
    response: spec.response as RS,
  };
  for (
    const key of [
      'authHidden',
      'authScheme',
      'authRefusals',
      'authRoles',
      'idempotent',
      'repeat',
      'summary',
      'description',
      'signedBy',
      'refusals',
      'alsoSucceedsWith',
      'performsFor',
      'envelope',
      'stream',
      'query',
      'body',
      'response',
    ] as const
  ) {
    Object.defineProperty(meta, key, { enumerable: false, writable: false });
  }
  return meta;
}
