// The typed client of the escrow service: openapi-fetch over the types that openapi-typescript
// generates from the service's OpenAPI document (./schema.ts, written by `npm run openapi` at the
// repository's root, never by hand). Paths, methods, query parameters, bodies, the Idempotency-Key
// header and every answer (the success envelope and its `data`, or the ErrorEnvelope) are typed.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.ts';

export type { components, operations, paths };
export type { Middleware };
export {
  RESET_REASONS,
  type SseMessage,
  SseParser,
  type StreamEvent,
  type StreamEventData,
  type StreamEventName,
  streamEvents,
  type StreamEventsOptions,
} from './stream.ts';

/** The client: `GET`, `POST`, `PATCH` of every operation as `/<operation>`, and `use(middleware)`. */
export type EscrowClient = Client<paths, 'application/json'>;

/** Every operation's name: `escrow-create`, `wallet-get`, ... (its path is `/<name>`). */
export type OperationName = keyof operations & string;

/** A refusal or failure: `{ success: false, status, error, details?, request_id? }`. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

/** A refusal's code (docs/errors.md): what a client branches on, never the text of `error`. */
export type ErrorCode = components['schemas']['ErrorCode'];

/** One entry of an ErrorEnvelope's `details`: the field refused and why. */
export type ErrorDetail = NonNullable<ErrorEnvelope['details']>[number];

type Responses<N extends OperationName> = operations[N]['responses'];
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;

/** The body of an operation's success answer: the envelope `{ success: true, status, data }`. */
export type SuccessAnswer<N extends OperationName> = {
  [S in keyof Responses<N>]: S extends SuccessStatus ? JsonOf<Responses<N>[S]> : never;
}[keyof Responses<N>];

type DataOfAnswer<A> = A extends { success: true; data: infer D } ? D : A;

/** The `data` of an operation's success answer (the answer itself for the one bare operation, `openapi`). */
export type Data<N extends OperationName> = DataOfAnswer<SuccessAnswer<N>>;

/** The JSON body an operation takes (`never` for a GET). */
export type Body<N extends OperationName> = operations[N] extends
  { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The query parameters of an operation (`never` when it takes none). */
export type Query<N extends OperationName> = NonNullable<operations[N]['parameters']['query']>;

/** Where the access token comes from: the token itself, or a function asked before every request. */
export type AccessToken = string | (() => string | null | undefined | Promise<string | null | undefined>);

export interface EscrowClientOptions {
  /** The functions' base URL: `http://127.0.0.1:54321/functions/v1`, `https://<ref>.supabase.co/functions/v1`. */
  baseUrl: string;
  /**
   * Sent as `Authorization: Bearer <token>` on every request that has no Authorization header of
   * its own. A function is asked each time, so a refreshed token is picked up.
   */
  accessToken?: AccessToken;
  /** The fetch to use (globalThis.fetch when omitted): a test double, a fetch with a timeout, ... */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request (e.g. Supabase's `apikey`). */
  headers?: Record<string, string>;
}

/** A client for the service at `baseUrl`, typed by the OpenAPI document. */
export function createEscrowClient(options: EscrowClientOptions): EscrowClient {
  const client = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const { accessToken } = options;
  if (accessToken !== undefined) {
    client.use({
      async onRequest({ request }) {
        if (request.headers.has('Authorization')) return undefined;
        const token = typeof accessToken === 'function' ? await accessToken() : accessToken;
        if (token) request.headers.set('Authorization', `Bearer ${token}`);
        return request;
      },
    });
  }
  return client;
}

export interface MerchantClientOptions extends Omit<EscrowClientOptions, 'accessToken'> {
  /** The merchant's API key (`esk_live_...`, or `esk_test_...` on a sandbox deployment), from your server's secrets. */
  apiKey: string;
}

/**
 * A client for a merchant's server: every request carries the merchant's API key as its bearer
 * token, for the operations that take a key (`merchant-escrow-*`, `webhook-delivery-*`). The
 * owner's own operations (`merchant-get`, `merchant-key-*`, `merchant-webhook-*`, the merchant's
 * wallet) take the owner's session instead: use `createEscrowClient` for them. A key must never
 * reach a browser or an app: it acts for the whole merchant.
 */
export function createMerchantClient(options: MerchantClientOptions): EscrowClient {
  const { apiKey, ...rest } = options;
  if (!/^esk_(live|test)_[A-Za-z0-9]+$/.test(apiKey)) {
    // a session token or an endpoint secret given by mistake: refuse before anything is sent
    throw new TypeError('apiKey must be a merchant API key (esk_live_... or esk_test_...)');
  }
  return createEscrowClient({ ...rest, accessToken: apiKey });
}

/** A refused or failed call: the HTTP status, the service's message and, for invalid input, each field. */
export class EscrowApiError extends Error {
  override name = 'EscrowApiError';
  /** The HTTP status (400, 401, 403, 404, 409, 429, ...). */
  readonly status: number;
  /**
   * Which refusal this is (`kyc_tier_required`, `escrow_wrong_state`, ...: docs/errors.md), or
   * undefined when the answer was not the service's envelope (a proxy's error page).
   */
  readonly code: ErrorCode | undefined;
  /** For a 400: each field refused and why. Empty otherwise. */
  readonly details: ErrorDetail[];
  /** For a 500: the id the service's log has the failure under. */
  readonly requestId: string | undefined;
  /** The answer's body: the ErrorEnvelope, or the text when the answer was not JSON. */
  readonly body: unknown;
  /** The answer itself (headers such as Retry-After). */
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const envelope = isErrorEnvelope(body) ? body : undefined;
    const message = envelope?.error ?? (typeof body === 'string' && body ? body : response.statusText);
    super(`${response.status} ${message}`);
    this.status = response.status;
    this.code = envelope?.code;
    this.details = envelope?.details ?? [];
    this.requestId = envelope?.request_id;
    this.body = body;
    this.response = response;
  }

  /** The service's message, without the status. */
  get error(): string {
    return isErrorEnvelope(this.body) ? this.body.error : this.message;
  }

  /** The names of the fields refused, sorted: `['amount', 'title']`. */
  get fields(): string[] {
    return this.details.map((d) => d.field).sort();
  }
}

function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  return typeof body === 'object' && body !== null && (body as { success?: unknown }).success === false &&
    typeof (body as { error?: unknown }).error === 'string';
}

/** What openapi-fetch's GET, POST, ... resolve to. */
type FetchResult = { data?: unknown; error?: unknown; response: Response };

/**
 * The `data` of a call's success answer, or an EscrowApiError carrying the status, the message and
 * the details of a refusal:
 *
 * ```ts
 * const wallet = await unwrap(client.GET('/wallet-get'));
 * ```
 */
export async function unwrap<R extends FetchResult>(
  call: Promise<R> | R,
): Promise<DataOfAnswer<NonNullable<R['data']>>> {
  type D = DataOfAnswer<NonNullable<R['data']>>;
  const result = await call;
  if (result.error !== undefined || !result.response.ok) throw new EscrowApiError(result.response, result.error);
  const body = result.data as unknown;
  if (typeof body === 'object' && body !== null && (body as { success?: unknown }).success === true) {
    return (body as { data: D }).data;
  }
  return body as D;
}
