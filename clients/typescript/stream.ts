// Live updates: the caller's events from `GET /events-stream` (Server-Sent Events) over fetch, so it
// runs wherever fetch streams a response body (browsers, Node, Deno, Bun, React Native with a
// streaming fetch such as expo/fetch). Each event is typed by its name, and its `data` is what the
// REST read of that name answers (the types come from ./schema.ts through `Data<...>`). When the
// server ends the stream (its `retry:` hint) or the network fails (a backoff), the helper connects
// again with the id of the last event received, so that nothing is lost and nothing repeats.
import { type AccessToken, type Data, EscrowApiError } from './index.ts';

/** What a `reset` event says: too much was missed, or the id sent is not one of the caller's events. */
export const RESET_REASONS = ['too_many_missed', 'unknown_position'] as const;

/** The `data` of each event, by its name: the object the REST read of that name answers. */
export interface StreamEventData {
  /** A message-feed item. */
  message: Data<'message-feed'>[number];
  /** A notification-list item. */
  notification: Data<'notification-list'>[number];
  /** What escrow-get answers. */
  escrow: Data<'escrow-get'>;
  /** What wallet-get answers. */
  wallet: Data<'wallet-get'>;
  /** Read your state again (the REST reads), then carry on with the events that follow. */
  reset: { reason: (typeof RESET_REASONS)[number] };
}

/** An event's name: `message`, `notification`, `escrow`, `wallet` or `reset`. */
export type StreamEventName = keyof StreamEventData;

/** One event, discriminated by `event`. A `reset` may come without an id. */
export type StreamEvent = {
  [K in StreamEventName]: {
    event: K;
    id: K extends 'reset' ? string | null : string;
    data: StreamEventData[K];
  };
}[StreamEventName];

export interface StreamEventsOptions {
  /** The functions' base URL, as for createEscrowClient. */
  baseUrl: string;
  /** The bearer token, or a function asked before each connection (so a refreshed token is used). */
  accessToken: AccessToken;
  /** Where to resume from: the id of the last event this app received (none: from now on). */
  lastEventId?: string | null;
  /** Ends the stream: the promise then resolves. */
  signal?: AbortSignal;
  /** Each event, in order, once. An exception thrown here ends the stream and rejects the promise. */
  onEvent: (event: StreamEvent) => void;
  /** The stream is open (again): what was missed follows, then live events. */
  onOpen?: () => void;
  /** A failure the helper recovers from (network, 429, 5xx), and the milliseconds until it tries again. */
  onError?: (error: unknown, retryInMs: number) => void;
  /** The fetch to use (globalThis.fetch when omitted). It must stream the response's body. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with each connection (e.g. Supabase's `apikey`). */
  headers?: Record<string, string>;
  /** Reconnect when nothing, not even a heartbeat, arrived for this long (ms; 45 s, 0 never). */
  idleTimeoutMs?: number;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * Streams the caller's events to `onEvent` until `signal` aborts (the promise resolves), or until
 * the service refuses the stream for good (it rejects with the EscrowApiError: a 401 when the
 * session ended, a 400, 403, ...). A 429 waits for its Retry-After; a network failure or a 5xx waits
 * a growing delay; the end of a stream waits the server's `retry:` hint. Each time it connects again
 * with the last id received, so missed events come first, in order, once.
 */
export async function streamEvents(options: StreamEventsOptions): Promise<void> {
  const { signal } = options;
  const state: Position = { lastId: options.lastEventId || null, retryMs: 1_000, failures: 0 };
  while (!signal?.aborted) {
    let wait: number;
    try {
      wait = await connectOnce(options, state);
    } catch (e) {
      if (signal?.aborted) return;
      if (e instanceof Stop) throw e.cause;
      if (e instanceof EscrowApiError) throw e;
      wait = backoff(state.retryMs, state.failures++);
      options.onError?.(e, wait);
    }
    await sleep(wait, signal);
  }
}

/** What outlives one connection: the id to resume after, the server's retry hint, the failures in a row. */
interface Position {
  lastId: string | null;
  retryMs: number;
  failures: number;
}

/**
 * One connection, read to its end: the milliseconds to wait before the next. Throws an
 * EscrowApiError for a refusal that stops the stream, a Stop, or a failure to back off from.
 */
async function connectOnce(options: StreamEventsOptions, state: Position): Promise<number> {
  const connection = new AbortController();
  const abort = () => connection.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abort);
  // A fetch that ignores its signal must not hold the helper: every wait races the abort.
  const aborted = new Promise<never>((_, reject) => {
    connection.signal.addEventListener('abort', () => reject(connection.signal.reason));
  });
  aborted.catch(() => {});
  const idleMs = options.idleTimeoutMs ?? 45_000;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const alive = () => {
    clearTimeout(idle);
    if (idleMs > 0) idle = setTimeout(() => connection.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  try {
    const { accessToken } = options;
    const token = typeof accessToken === 'function' ? await accessToken() : accessToken;
    // The resume goes in the query (`last_event_id`), which the service reads as it reads the
    // Last-Event-ID header: a browser sends that header cross-origin only after a CORS preflight.
    const url = `${options.baseUrl.replace(/\/+$/, '')}/events-stream` +
      (state.lastId ? `?last_event_id=${encodeURIComponent(state.lastId)}` : '');
    const headers = new Headers(options.headers);
    headers.set('Accept', 'text/event-stream');
    if (token) headers.set('Authorization', `Bearer ${token}`);
    alive();
    const fetchFn = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    const response = await Promise.race([fetchFn(new Request(url, { headers, signal: connection.signal })), aborted]);
    if (!response.ok) {
      const error = new EscrowApiError(response, await Promise.race([bodyOf(response), aborted]));
      if (response.status !== 429 && response.status < 500) throw error;
      const wait = Math.max(retryAfterMs(response) ?? 0, backoff(state.retryMs, state.failures++));
      options.onError?.(error, wait);
      return wait;
    }
    if (!response.body) throw new Stop(new TypeError('This fetch does not stream response bodies: pass one that does'));
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream')) throw new Error(`Not an event stream: ${type}`); // a proxy's page
    state.failures = 0;
    options.onOpen?.();
    const parser = new SseParser();
    const reader = response.body.getReader();
    for (
      let read = await Promise.race([reader.read(), aborted]);
      !read.done;
      read = await Promise.race([reader.read(), aborted])
    ) {
      alive();
      deliver(parser.push(read.value), options, state);
    }
    deliver(parser.end(), options, state);
    if (parser.retry !== undefined) state.retryMs = parser.retry;
    return state.retryMs;
  } finally {
    clearTimeout(idle);
    options.signal?.removeEventListener('abort', abort);
    connection.abort(); // ends the body when this connection stopped reading it early
  }
}

/** Hands the events to the app, moving the resume position past each. */
function deliver(messages: SseMessage[], options: StreamEventsOptions, state: Position): void {
  for (const m of messages) {
    if (options.signal?.aborted) return;
    if (m.id !== undefined) state.lastId = m.id || null;
    else if (m.event === 'reset') state.lastId = null; // a reset without an id: the caller has no events yet
    if (!Object.hasOwn(EVENT_NAMES, m.event)) continue; // a kind newer than this client
    const event = { event: m.event, id: m.id ?? null, data: JSON.parse(m.data) } as StreamEvent;
    try {
      options.onEvent(event);
    } catch (e) {
      throw new Stop(e);
    }
  }
}

const EVENT_NAMES: Record<StreamEventName, true> = {
  message: true,
  notification: true,
  escrow: true,
  wallet: true,
  reset: true,
};

/** A failure that ends the stream (onEvent threw, the fetch cannot stream), carried past the retries. */
class Stop {
  constructor(readonly cause: unknown) {}
}

/** `base` doubled for each failure in a row, at most 30 s, spread over its upper half. */
function backoff(base: number, failures: number): number {
  const ms = Math.min(MAX_BACKOFF_MS, base * 2 ** failures);
  return Math.round(ms / 2 + Math.random() * (ms / 2));
}

function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'));
  return response.headers.has('retry-after') && Number.isFinite(seconds) ? seconds * 1000 : undefined;
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

/** One event as the wire has it: its `id:` field (undefined when it had none), its name, its data. */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * An incremental parser of the event-stream format (the HTML standard's rules): give it the bytes
 * as they arrive, split anywhere (inside a line, a field or a UTF-8 character); it answers the
 * events completed so far. Lines end with LF, CRLF or CR; `:` lines are comments; `data:` lines
 * join with LF; `retry:` sets `retry`; an event without data is not dispatched.
 */
export class SseParser {
  /** The last `retry:` the stream gave, in milliseconds. */
  retry: number | undefined;
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;

  /** The events completed by this chunk. */
  push(chunk: Uint8Array | string): SseMessage[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      // a CR at the end of what arrived may be the first half of a CRLF: wait for the next chunk
      if (c === '\r' && i === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, i), out);
      if (c === '\r' && this.buffer[i + 1] === '\n') i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** The end of the stream: a last line ended by a CR completes; an event without its blank line is dropped. */
  end(): SseMessage[] {
    const rest = this.buffer + this.decoder.decode();
    this.buffer = '';
    const out: SseMessage[] = [];
    if (rest.endsWith('\r')) this.line(rest.slice(0, -1), out);
    this.data = [];
    this.event = '';
    this.id = undefined;
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) {
        out.push({
          id: this.id,
          event: this.event || 'message',
          data: this.data.join('\n'),
        });
      }
      this.data = [];
      this.event = '';
      this.id = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^[0-9]+$/.test(value)) {
      this.retry = Number(value);
    }
  }
}
