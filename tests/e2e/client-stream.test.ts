// The typed client's live stream (clients/typescript/stream.ts, streamEvents) against the real
// service: B's helper receives the message A sends, its data as message-feed answers B; when the
// connection is cut, the helper connects again by itself with the last id it received and the
// messages sent meanwhile arrive once, in order; after a logout it stops with the 401. The
// connection is cut by the test's fetch (the server's heartbeat and end of stream take 15 and
// 120 s), which holds the reconnection until the test has sent what is to be missed.
import { afterEach, describe, expect, it } from 'vitest';
import { EscrowApiError, type StreamEvent, streamEvents, unwrap } from '../../clients/typescript/index.ts';
import { baseUrl } from '../support/api.ts';
import { testClient } from '../support/client.ts';
import { newDeal } from '../support/escrows.ts';
import { openChat } from '../../clients/typescript/example-chat.ts';

/** A fetch whose current connection the test can cut, and whose next connections it can hold back. */
function cuttableFetch() {
  let current: AbortController | undefined;
  let gate: Promise<void> = Promise.resolve();
  let open!: () => void;
  const requests: Request[] = [];
  return {
    requests,
    fetch: async (request: Request) => {
      requests.push(request);
      await gate;
      current = new AbortController();
      return await fetch(request, { signal: AbortSignal.any([request.signal, current.signal]) });
    },
    /** Drops the connection as a network failure would; the next one waits for `reopen()`. */
    cut() {
      gate = new Promise((resolve) => (open = resolve));
      current?.abort(new TypeError('connection cut by the test'));
    },
    reopen: () => open(),
  };
}

/** Polls `check` until it holds (10 s at most). */
async function until(what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** B's helper, running until the test ends (or the service stops it). */
function startHelper(token: string) {
  const connection = cuttableFetch();
  const events: StreamEvent[] = [];
  const errors: unknown[] = [];
  let opened = 0;
  const stop = new AbortController();
  stops.push(stop);
  const done = streamEvents({
    baseUrl: baseUrl(),
    accessToken: token,
    fetch: connection.fetch,
    signal: stop.signal,
    onOpen: () => opened++,
    onEvent: (e) => events.push(e),
    onError: (e) => errors.push(e),
  });
  done.catch(() => {}); // read by the test that expects it to fail
  return { connection, events, errors, opened: () => opened, done };
}

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

const messagesOf = (events: StreamEvent[]) => events.flatMap((e) => (e.event === 'message' ? [e.data] : []));

describe('events-stream', () => {
  it("delivers the message A sends to B's helper, with the data message-feed answers B", async () => {
    const deal = await newDeal();
    const a = testClient(deal.initiator.accessToken);
    const b = testClient(deal.counterparty.accessToken);
    const helper = startHelper(deal.counterparty.accessToken);
    await until('the stream is open', () => helper.opened() === 1);

    const sent = await unwrap(
      a.POST('/message-send', {
        body: { conversation_id: deal.conversationId, content: 'Ẹ káàrọ̀: is it still available?' },
      }),
    );
    await until('B received it', () => messagesOf(helper.events).length === 1);

    const [event] = helper.events;
    expect(event?.event).toBe('message');
    expect(event?.id).toMatch(/^[1-9][0-9]*$/);
    const feed = await unwrap(b.GET('/message-feed', { params: { query: { conversation_id: deal.conversationId } } }));
    expect(event?.data).toEqual(feed.find((m) => m.id === sent.id));
    expect(event?.data).toMatchObject({ id: sent.id, sender_id: deal.initiator.id, content: sent.content });
    expect(helper.errors).toEqual([]);
  });

  it('after the connection is cut, reconnects with the last id: what was sent meanwhile arrives once, in order', async () => {
    const deal = await newDeal();
    const a = testClient(deal.initiator.accessToken);
    const b = testClient(deal.counterparty.accessToken);
    const helper = startHelper(deal.counterparty.accessToken);
    await until('the stream is open', () => helper.opened() === 1);
    const send = async (content: string) =>
      (await unwrap(a.POST('/message-send', { body: { conversation_id: deal.conversationId, content } }))).id;

    const first = await send('one');
    await until('B received the first', () => messagesOf(helper.events).length === 1);
    const lastBeforeCut = helper.events.at(-1)?.id;

    helper.connection.cut();
    await until('the helper saw the cut', () => helper.errors.length === 1);
    const missed = [await send('two, while B was away'), await send('three, while B was away')];
    helper.connection.reopen();
    await until('the stream is open again', () => helper.opened() === 2);
    await until('B received what it missed', () => messagesOf(helper.events).length === 3);
    const live = await send('four, live again');
    await until('B received the live one', () => messagesOf(helper.events).length === 4);

    // the second connection resumed after the last event received, and nothing was lost or repeated
    const resumedAfter = helper.connection.requests.map((r) => new URL(r.url).searchParams.get('last_event_id'));
    expect(resumedAfter).toEqual([null, lastBeforeCut]);
    expect(messagesOf(helper.events).map((m) => m.id)).toEqual([first, ...missed, live]);
    const ids = helper.events.map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    // each as message-feed answers B
    const feed = await unwrap(b.GET('/message-feed', { params: { query: { conversation_id: deal.conversationId } } }));
    for (const m of messagesOf(helper.events)) expect(m).toEqual(feed.find((f) => f.id === m.id));
    expect(helper.errors).toHaveLength(1);
    expect(String(helper.errors[0])).toContain('connection cut by the test');
  });

  it('stops with a 401 EscrowApiError once the session has ended (logout), instead of retrying', async () => {
    const deal = await newDeal();
    const b = testClient(deal.counterparty.accessToken);
    const helper = startHelper(deal.counterparty.accessToken);
    await until('the stream is open', () => helper.opened() === 1);

    await unwrap(b.POST('/auth-logout'));
    // the server would end this stream at its next heartbeat (15 s); a cut brings the reconnect now
    helper.connection.cut();
    helper.connection.reopen();
    const error = await helper.done.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(EscrowApiError);
    expect([(error as EscrowApiError).status, (error as EscrowApiError).code]).toEqual([401, 'unauthenticated']);
    expect(helper.connection.requests).toHaveLength(2);
  });

  it("the README's chat screen shows the conversation, then each message of it as it is sent, once", async () => {
    const deal = await newDeal();
    const a = testClient(deal.initiator.accessToken);
    const b = testClient(deal.counterparty.accessToken);
    const other = await unwrap(a.POST('/escrow-create', {
      body: {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Another deal',
        counterparty_phone: deal.counterparty.phone,
        amount: 5_000,
      },
    }));
    const send = async (conversation_id: string, content: string) =>
      (await unwrap(a.POST('/message-send', { body: { conversation_id, content } }))).id;
    const before = await send(deal.conversationId, 'sent before the screen opened');

    let shown: { id: string; content: string }[] = [];
    const errors: unknown[] = [];
    let signedOut = false;
    const stop = new AbortController();
    stops.push(stop);
    const running = openChat({
      baseUrl: baseUrl(),
      accessToken: () => deal.counterparty.accessToken,
      conversation: { conversation_id: deal.conversationId, escrow_id: deal.escrowId },
      render: (items) => (shown = items),
      onSignedOut: () => (signedOut = true),
      onError: (e) => errors.push(e),
      signal: stop.signal,
    });
    await until('the conversation is shown', () => shown.some((m) => m.id === before));
    const live = await send(deal.conversationId, 'sent while it is open');
    await send(other.conversation_id, 'in another conversation');
    const last = await send(deal.conversationId, 'and one more');
    await until('both arrived', () => shown.some((m) => m.id === last));

    const feed = await unwrap(b.GET('/message-feed', { params: { query: { conversation_id: deal.conversationId } } }));
    const messages = [...feed].filter((m) => m.source === 'message').sort((x, y) =>
      x.created_at.localeCompare(y.created_at)
    );
    expect(messages.map((m) => m.id)).toEqual([before, live, last]);
    expect(shown.filter((m) => messages.some((f) => f.id === m.id))).toEqual(messages);
    expect(shown.map((m) => m.content)).not.toContain('in another conversation');
    expect([errors, signedOut]).toEqual([[], false]);
    stop.abort();
    await running;
  });
});
