// The typed client's live stream (clients/typescript/stream.ts): its event-stream parser, fed the
// bytes split anywhere, and streamEvents() against a fetch of the test's own (reconnects, the resume
// id, the retry hint, Retry-After, the refusals that stop it). tests/e2e/client-stream.test.ts runs
// it against the real service. The types of each event's data are checked against the document's
// `x-events` here, and by tsc (the `@ts-expect-error` lines).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  EscrowApiError,
  RESET_REASONS,
  type SseMessage,
  SseParser,
  type StreamEvent,
  streamEvents,
} from '../../clients/typescript/index.ts';

const encoder = new TextEncoder();

/** Feeds `bytes` to a new parser cut at `cuts` (byte offsets), then ends it. */
function parseCut(bytes: Uint8Array, cuts: number[]): { messages: SseMessage[]; retry: number | undefined } {
  const parser = new SseParser();
  const messages: SseMessage[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    messages.push(...parser.push(bytes.slice(from, cut)));
    from = cut;
  }
  messages.push(...parser.end());
  return { messages, retry: parser.retry };
}

/** The same text parsed whole, and cut at every single offset and at every pair of offsets: all equal. */
function expectSameAtEveryCut(text: string, expected: SseMessage[]): void {
  const bytes = encoder.encode(text);
  expect(parseCut(bytes, []).messages).toEqual(expected);
  for (let i = 1; i < bytes.length; i++) {
    expect(parseCut(bytes, [i]).messages, `cut at byte ${i}`).toEqual(expected);
    for (let j = i + 1; j < bytes.length; j++) {
      expect(parseCut(bytes, [i, j]).messages, `cut at bytes ${i} and ${j}`).toEqual(expected);
    }
  }
}

describe('SseParser', () => {
  it('reads id, event and data, whatever byte a chunk ends on (inside a field name, a value, a line end)', () => {
    expectSameAtEveryCut('id: 41\nevent: message\ndata: {"a":1}\n\nid: 42\nevent: wallet\ndata: {"b":2}\n\n', [
      { id: '41', event: 'message', data: '{"a":1}' },
      { id: '42', event: 'wallet', data: '{"b":2}' },
    ]);
  });

  it('decodes a UTF-8 character split across chunks', () => {
    const text = 'id: 7\nevent: message\ndata: {"content":"Ẹ ku àárọ̀ 👋🏾 ₦5,000"}\n\n';
    const bytes = encoder.encode(text);
    // every cut inside a multi-byte character (the parser must not decode each chunk on its own)
    for (let i = 1; i < bytes.length; i++) {
      expect(parseCut(bytes, [i]).messages, `cut at byte ${i}`).toEqual([
        { id: '7', event: 'message', data: '{"content":"Ẹ ku àárọ̀ 👋🏾 ₦5,000"}' },
      ]);
    }
  });

  it('ends lines with CRLF, LF or CR, a CRLF split between chunks counting once', () => {
    const expected = [{ id: '1', event: 'escrow', data: 'x' }, { id: '2', event: 'escrow', data: 'y' }];
    expectSameAtEveryCut(
      'id: 1\r\nevent: escrow\r\ndata: x\r\n\r\nid: 2\r\nevent: escrow\r\ndata: y\r\n\r\n',
      expected,
    );
    expectSameAtEveryCut('id: 1\revent: escrow\rdata: x\r\rid: 2\nevent: escrow\r\ndata: y\n\r', expected);
  });

  it('skips comments (ready, heartbeats) without breaking the event around them', () => {
    expectSameAtEveryCut(': ready\n\n: heartbeat\n\nid: 3\n: a comment inside\nevent: notification\ndata: {}\n\n', [
      { id: '3', event: 'notification', data: '{}' },
    ]);
  });

  it('joins data lines with LF, takes one space after the colon, and names an unnamed event message', () => {
    expectSameAtEveryCut('data:first\ndata:  second\ndata\n\n', [{
      id: undefined,
      event: 'message',
      data: 'first\n second\n',
    }]);
  });

  it('keeps the last retry in milliseconds, ignores one that is not digits, and dispatches no event without data', () => {
    const bytes = encoder.encode(': ready\n\nretry: 1500\n\nretry: soon\n\nid: 9\nevent: wallet\n\n');
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseCut(bytes, i === 0 ? [] : [i]), `cut at byte ${i}`).toEqual({ messages: [], retry: 1500 });
    }
  });

  it('drops an event the stream ended in the middle of (no blank line after it)', () => {
    expectSameAtEveryCut('id: 1\nevent: message\ndata: {}\n\nid: 2\nevent: message\ndata: {}\n', [
      { id: '1', event: 'message', data: '{}' },
    ]);
  });
});

// ---- streamEvents against a fetch of the test's own ----------------------------------------------

const BASE = 'http://127.0.0.1:1/functions/v1';

/** A fetch answering each request with the next of `answers`; a stream answer's body is the text given. */
function scriptedFetch(answers: (() => Response)[]) {
  const requests: Request[] = [];
  const fetch = (request: Request) => {
    requests.push(request);
    const next = answers.shift();
    if (!next) return new Promise<Response>(() => {}); // the last connection stays open
    return Promise.resolve(next());
  };
  return { fetch, requests };
}

const sse = (text: string) => () =>
  new Response(text, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
const refusal = (status: number, code: string, headers: Record<string, string> = {}) => () =>
  Response.json({ success: false, status, code, error: code }, { status, headers });
const resumeOf = (r: Request) => new URL(r.url).searchParams.get('last_event_id');

/** Runs streamEvents until `until(events)` holds, then aborts it; what it received and asked. */
async function run(
  answers: (() => Response)[],
  until: (events: StreamEvent[]) => boolean,
  extra: { lastEventId?: string } = {},
) {
  const { fetch, requests } = scriptedFetch(answers);
  const events: StreamEvent[] = [];
  const errors: [unknown, number][] = [];
  const stop = new AbortController();
  const done = streamEvents({
    baseUrl: `${BASE}/`,
    accessToken: () => 'tok-1',
    fetch,
    signal: stop.signal,
    ...extra,
    onEvent: (e) => {
      events.push(e);
      if (until(events)) stop.abort();
    },
    onError: (e, ms) => errors.push([e, ms]),
  });
  return { done, events, errors, requests, stop };
}

describe('streamEvents', () => {
  afterEach(() => vi.useRealTimers());

  it('connects with the bearer token, then again after the end of a stream, resuming after the last id', async () => {
    const { done, events, requests } = await run([
      sse(': ready\n\nid: 10\nevent: message\ndata: {"id":"m1"}\n\nretry: 5\n\n'),
      sse(': ready\n\nid: 11\nevent: wallet\ndata: {"balance":1}\n\n'),
    ], (e) => e.length === 2);
    await done;
    expect(events).toEqual([
      { event: 'message', id: '10', data: { id: 'm1' } },
      { event: 'wallet', id: '11', data: { balance: 1 } },
    ]);
    expect(requests.map((r) => [r.url.split('?')[0], r.headers.get('authorization'), r.headers.get('accept')])).toEqual(
      Array(2).fill([`${BASE}/events-stream`, 'Bearer tok-1', 'text/event-stream']),
    );
    expect(requests.map(resumeOf)).toEqual([null, '10']);
  });

  it('starts from lastEventId, and after a reset without an id starts from now', async () => {
    const { done, events, requests } = await run(
      [
        sse('event: reset\ndata: {"reason":"unknown_position"}\n\nretry: 1\n\n'),
        sse('id: 5\nevent: reset\ndata: {"reason":"too_many_missed"}\n\nretry: 1\n\n'),
        sse('id: 6\nevent: escrow\ndata: {}\n\n'),
      ],
      (e) => e.length === 3,
      { lastEventId: '99' },
    );
    await done;
    expect(events.map((e) => [e.event, e.id])).toEqual([['reset', null], ['reset', '5'], ['escrow', '6']]);
    expect(requests.map(resumeOf)).toEqual(['99', null, '5']);
  });

  it('skips an event name it does not know, but resumes after its id', async () => {
    const { done, events, requests } = await run([
      sse('id: 20\nevent: future_kind\ndata: {}\n\nretry: 1\n\n'),
      sse('id: 21\nevent: notification\ndata: {}\n\n'),
    ], (e) => e.length === 1);
    await done;
    expect(events.map((e) => e.id)).toEqual(['21']);
    expect(requests.map(resumeOf)).toEqual([null, '20']);
  });

  it('waits the retry hint of the stream that ended before connecting again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { events, requests, stop, done } = await run([
      sse('id: 1\nevent: message\ndata: {}\n\nretry: 4000\n\n'),
      sse('id: 2\nevent: message\ndata: {}\n\n'),
    ], () => false);
    await vi.advanceTimersByTimeAsync(3_900);
    expect([requests.length, events.length]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(200);
    expect([requests.length, events.length]).toEqual([2, 2]);
    stop.abort();
    await done;
  });

  it('waits the Retry-After of a 429, and backs off after a network failure, reporting each', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { requests, errors, stop, done } = await run([
      refusal(429, 'rate_limited', { 'retry-after': '30' }),
      () => {
        throw new TypeError('network down');
      },
    ], () => false); // the third connection stays open
    await vi.advanceTimersByTimeAsync(29_900);
    expect(requests).toHaveLength(1);
    expect(errors[0]?.[0]).toBeInstanceOf(EscrowApiError);
    expect((errors[0]?.[0] as EscrowApiError).status).toBe(429);
    expect(errors[0]?.[1]).toBeGreaterThanOrEqual(30_000);
    await vi.advanceTimersByTimeAsync(200);
    expect(requests).toHaveLength(2);
    expect(errors[1]?.[0]).toBeInstanceOf(TypeError);
    // the second failure in a row: between 1 and 2 s (1 s doubled, spread over its upper half)
    expect(errors[1]?.[1]).toBeGreaterThanOrEqual(1_000);
    expect(errors[1]?.[1]).toBeLessThanOrEqual(2_000);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(requests).toHaveLength(3);
    stop.abort();
    await done;
  });

  it('connects again when nothing arrives for idleTimeoutMs (a connection that died silently)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const hanging = () =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(encoder.encode(': ready\n\n')) }), {
        headers: { 'content-type': 'text/event-stream' },
      });
    const { requests, errors, stop, done } = await run([hanging], () => false);
    await vi.advanceTimersByTimeAsync(44_000);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000 + 1_000);
    expect(errors).toHaveLength(1);
    expect(requests).toHaveLength(2);
    stop.abort();
    await done;
  });

  it('stops with the EscrowApiError of a 401 (the session ended), and of a 400', async () => {
    for (const [status, code] of [[401, 'unauthenticated'], [400, 'validation_failed']] as const) {
      const { done, requests, errors } = await run([refusal(status, code)], () => false);
      const error = await done.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EscrowApiError);
      expect([(error as EscrowApiError).status, (error as EscrowApiError).code]).toEqual([status, code]);
      expect([requests.length, errors.length]).toEqual([1, 0]);
    }
  });

  it('stops with what onEvent threw, and resolves when the signal aborts', async () => {
    const { fetch } = scriptedFetch([sse('id: 1\nevent: message\ndata: {}\n\n')]);
    const thrown = new Error('app bug');
    const failed = streamEvents({
      baseUrl: BASE,
      accessToken: 't',
      fetch,
      onEvent: () => {
        throw thrown;
      },
    });
    await expect(failed).rejects.toBe(thrown);
    const stop = new AbortController();
    const open = scriptedFetch([]); // a connection that never answers
    const running = streamEvents({
      baseUrl: BASE,
      accessToken: 't',
      fetch: open.fetch,
      signal: stop.signal,
      onEvent() {},
    });
    stop.abort();
    await expect(running).resolves.toBeUndefined();
  });
});

describe('the types of the events', () => {
  const document = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../docs/api/openapi.json', import.meta.url)), 'utf8'),
  );
  const ok = (path: string) =>
    document.paths[path].get.responses['200'].content['application/json'].schema.properties.data;
  const xEvents = document.paths['/events-stream'].get.responses['200'].content['text/event-stream']['x-events'];

  it('are those of the REST reads the client derives them from (the document says the same)', () => {
    // StreamEventData: message = Data<'message-feed'>[number], notification = Data<'notification-list'>[number],
    // escrow = Data<'escrow-get'>, wallet = Data<'wallet-get'>
    expect(Object.keys(xEvents).sort()).toEqual(['escrow', 'message', 'notification', 'reset', 'wallet']);
    expect(xEvents.message).toEqual(ok('/message-feed').items);
    expect(xEvents.notification).toEqual(ok('/notification-list').items);
    expect(xEvents.escrow).toEqual(ok('/escrow-get'));
    expect(xEvents.wallet).toEqual(ok('/wallet-get'));
    expect(xEvents.reset.properties.reason.enum).toEqual([...RESET_REASONS]);
    expect(xEvents.reset.required).toEqual(['reason']);
  });

  it('narrow by the event name (checked by tsc --noEmit)', () => {
    const seen: unknown[] = [];
    const onEvent = (e: StreamEvent) => {
      switch (e.event) {
        case 'message': {
          const content: string = e.data.content;
          const id: string = e.id;
          // @ts-expect-error -- a message has no balance
          seen.push(content, id, e.data.balance);
          break;
        }
        case 'wallet': {
          const currency: 'NGN' = e.data.currency;
          seen.push(currency);
          break;
        }
        case 'reset': {
          // @ts-expect-error -- a reset may come without an id
          const id: string = e.id;
          // @ts-expect-error -- not a reason the service gives
          const reason: 'expired' = e.data.reason;
          seen.push(id, reason);
          break;
        }
      }
    };
    onEvent({ event: 'reset', id: null, data: { reason: 'too_many_missed' } });
    expect(seen).toEqual([null, 'too_many_missed']);
  });
});
