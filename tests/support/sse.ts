// A live stream (GET /events-stream) as a test reads it: real HTTP, the Server-Sent Events parsed
// as they arrive. `next` waits for an event that matches; `quiet` asserts that none arrives for a
// while; `close` hangs up. Comments (`: ready`, `: heartbeat`) and `retry:` are recorded too, so a
// test can wait for the stream to be live or for the server to end it.
import { baseUrl } from './api.ts';
import { checkAgainstDocument } from './responses.ts';

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export interface OpenedStream {
  status: number;
  headers: Headers;
  /** The JSON body of a refusal (when status is not 200). */
  refusal: { code: string; error: string } | undefined;
  /** Every event received so far, in order. */
  events: SseEvent[];
  /** Every comment received so far (`ready`, `heartbeat`). */
  comments: string[];
  /** The last `retry:` hint, in milliseconds. */
  retry: number | undefined;
  /** Resolves when the server has ended the stream. */
  ended: Promise<void>;
  /** The next event after the `from`-th (default: after those already taken) that matches. */
  next(match?: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Fails if an event arrives within ms. */
  quiet(ms: number): Promise<void>;
  close(): void;
}

export interface StreamOptions {
  token?: string;
  ticket?: string;
  lastEventId?: string;
  /** Sent as the last_event_id query parameter instead of the header. */
  lastEventIdQuery?: string;
  headers?: Record<string, string>;
  base?: string;
}

/** Opens a stream and resolves once the server has answered (for a 200: once it said `ready`). */
export async function openEvents(opts: StreamOptions = {}): Promise<OpenedStream> {
  const url = new URL(`${opts.base ?? baseUrl()}/events-stream`);
  if (opts.ticket) url.searchParams.set('ticket', opts.ticket);
  if (opts.lastEventIdQuery) url.searchParams.set('last_event_id', opts.lastEventIdQuery);
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.lastEventId) headers['Last-Event-ID'] = opts.lastEventId;
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let taken = 0;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const stream: OpenedStream = {
    status: res.status,
    headers: res.headers,
    refusal: undefined,
    events,
    comments,
    retry: undefined,
    ended: Promise.resolve(),
    next(match = () => true, timeoutMs = 10_000) {
      return new Promise<SseEvent>((resolve, reject) => {
        const check = () => {
          for (let i = taken; i < events.length; i++) {
            if (match(events[i] as SseEvent)) {
              taken = i + 1;
              waiters.delete(check);
              clearTimeout(timer);
              resolve(events[i] as SseEvent);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no matching event within ${timeoutMs} ms; received ${JSON.stringify(events.slice(taken))}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async quiet(ms) {
      const before = events.length;
      await new Promise((r) => setTimeout(r, ms));
      if (events.length !== before) {
        throw new Error(`expected no event, received ${JSON.stringify(events.slice(before))}`);
      }
    },
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) {
    stream.refusal = await res.json();
    // a refusal is checked against the document, and counted among the answers the suites received
    checkAgainstDocument('events-stream', 'GET', res.status, stream.refusal, res.headers);
    return stream;
  }
  checkAgainstDocument('events-stream', 'GET', 200, '', res.headers);
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  stream.ended = (async () => {
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: SseEvent = { id: null, event: 'message', data: '' };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line.slice(1).trim());
              if (line.slice(1).trim() === 'ready') ready();
            } else if (line.startsWith('retry: ')) stream.retry = Number(line.slice(7));
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) {
              event.data = line.slice(6);
              isEvent = true;
            }
          }
          if (isEvent) {
            // each event's data against its schema in the document (x-events)
            checkAgainstDocument('events-stream', 'GET', 200, `${block}\n\n`);
            events.push(event);
          }
          notify();
        }
      }
    } catch {
      // closed by the test
    } finally {
      ready();
      notify();
    }
  })();
  await isReady;
  return stream;
}
