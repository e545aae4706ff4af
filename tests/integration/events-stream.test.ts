// Live streams through the real server (shared/events/, docs/events.md): GET /events-stream delivers
// the caller's events, and only theirs, each with the data the REST read answers them; a resume
// with Last-Event-ID misses and repeats nothing; a transaction that commits late is delivered once,
// in its place; a logout ends the stream at the next heartbeat (2 s on the test stack); tickets
// open streams for browsers. The test stack LISTENs on its database directly
// (DATABASE_SESSION_URL); events-npm-start.test.ts runs the poll.
import { createHash } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { anotherConversation, newDeal } from '../support/escrows.ts';
import { signUp } from '../support/users.ts';
import { openEvents, type SseEvent } from '../support/sse.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import eventsTicket from '../../supabase/functions/events-ticket/handler.ts';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';

const held = postgres(inject('databaseUrl'), { max: 3, onnotice: () => {} });
afterAll(() => held.end());

const isMessage = (id: string) => (e: SseEvent) => e.event === 'message' && JSON.parse(e.data).id === id;
const messages = (events: SseEvent[]) => events.filter((e) => e.event === 'message').map((e) => JSON.parse(e.data));

async function send(token: string, conversationId: string, content: string): Promise<string> {
  const sent = await post(messageSend, { conversation_id: conversationId, content }, { token });
  expect(sent.status, JSON.stringify(sent.body)).toBe(201);
  return sent.body.data.id;
}

/** How a ticket is stored: its SHA-256 (shared/events/tickets.ts). */
const ticketHash = (ticket: string) => createHash('sha256').update(`stream-ticket:${ticket}`).digest('hex');

/** Wakes the servers' listeners, as a write request does (for rows written here in SQL). */
const wake = () => held`select pg_notify('escrow_events', '')`;

describe('events-stream', () => {
  it("a message one party sends arrives on the other's stream as message-feed has it, and on no stranger's", async () => {
    const deal = await newDeal();
    const stranger = await signUp();
    const mine = await openEvents({ token: deal.counterparty.accessToken });
    const theirs = await openEvents({ token: stranger.accessToken });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(mine.headers.get('cache-control')).toContain('no-cache');
    const id = await send(deal.initiator.accessToken, deal.conversationId, 'Is it still for sale? "yes" \n ✓');
    const event = await mine.next(isMessage(id));
    const feed = await get(messageFeed, {
      token: deal.counterparty.accessToken,
      query: { conversation_id: deal.conversationId },
    });
    const item = feed.body.data.find((i) => i.id === id);
    expect(JSON.parse(event.data)).toEqual(item);
    expect(event.id).toMatch(/^[1-9][0-9]*$/);
    await theirs.quiet(500);
    expect(theirs.events).toEqual([]);
    mine.close();
    theirs.close();
  });

  it('hears of new events on its one LISTEN connection (DATABASE_SESSION_URL), within a second of the NOTIFY', async () => {
    const user = await signUp();
    const s = await openEvents({ token: user.accessToken });
    const listeners = await testDb()<{ query: string }[]>`
      select query from pg_stat_activity where application_name = 'escrow-events-listener'`;
    expect(listeners).toHaveLength(1);
    expect(listeners[0]!.query).toMatch(/^listen/i);
    // written in SQL: only the NOTIFY can wake the reader before its 5 s safety poll
    await held`select private.event_write('wallet', ${user.id}::uuid, null, array[${user.id}::uuid])`;
    const woken = Date.now();
    await wake();
    await s.next((e) => e.event === 'wallet', 4_000);
    expect(Date.now() - woken).toBeLessThan(1_000);
    s.close();
  });

  it("an escrow event carries escrow-get's answer in the recipient's own view", async () => {
    const deal = await newDeal({ payerRole: 'counterparty' });
    const initiator = await openEvents({ token: deal.initiator.accessToken });
    const accepted = await post('escrow-accept', { escrow_id: deal.escrowId }, {
      token: deal.counterparty.accessToken,
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const event = await initiator.next((e) => e.event === 'escrow' && JSON.parse(e.data).id === deal.escrowId);
    const read = await get(escrowGet, { token: deal.initiator.accessToken, query: { escrow_id: deal.escrowId } });
    expect(JSON.parse(event.data)).toEqual(read.body.data);
    expect(read.body.data.status).toBe(accepted.body.data.status);
    initiator.close();
  });

  it('resumes after Last-Event-ID (header or query): what was missed, in order, once, then live', async () => {
    const deal = await newDeal();
    const first = await openEvents({ token: deal.counterparty.accessToken });
    const a = await send(deal.initiator.accessToken, deal.conversationId, 'one');
    const seen = await first.next(isMessage(a));
    first.close();
    const missed = [];
    for (const text of ['two', 'three', 'four']) {
      missed.push(await send(deal.initiator.accessToken, deal.conversationId, text));
    }
    for (const option of [{ lastEventId: seen.id as string }, { lastEventIdQuery: seen.id as string }]) {
      const again = await openEvents({ token: deal.counterparty.accessToken, ...option });
      for (const id of missed) await again.next(isMessage(id));
      const live = await send(deal.initiator.accessToken, deal.conversationId, 'five');
      await again.next(isMessage(live));
      const ids = messages(again.events).map((m) => m.id);
      expect(ids).toEqual([...missed, live]);
      again.close();
      missed.push(live);
    }
  });

  it('a reconnect under concurrent writes misses and repeats nothing', async () => {
    const deal = await newDeal();
    const sent: string[] = [];
    let writing = true;
    // live before the first write
    let current = await openEvents({ token: deal.counterparty.accessToken });
    const writer = (async () => {
      for (let i = 0; writing && i < 60; i++) {
        sent.push(
          await send(i % 2 ? deal.initiator.accessToken : deal.counterparty.accessToken, deal.conversationId, `m${i}`),
        );
      }
    })();
    const received: SseEvent[] = [];
    let last: string | undefined;
    for (let round = 0; round < 5; round++) {
      await new Promise((r) => setTimeout(r, 150));
      current.close();
      await current.ended;
      received.push(...current.events);
      last = current.events.at(-1)?.id ?? last;
      current = await openEvents({ token: deal.counterparty.accessToken, lastEventId: last });
    }
    current.close();
    await current.ended;
    received.push(...current.events);
    last = current.events.at(-1)?.id ?? last;
    writing = false;
    await writer;
    // the rest, after the writes
    const rest = await openEvents({ token: deal.counterparty.accessToken, lastEventId: last });
    const final = sent.at(-1) as string;
    if (!messages(received).some((m) => m.id === final)) await rest.next(isMessage(final));
    else await rest.quiet(300);
    rest.close();
    received.push(...rest.events);
    const ids = messages(received).map((m) => m.id);
    expect(new Set(ids).size, 'no message twice').toBe(ids.length);
    expect(ids).toEqual(sent);
  });

  it('a transaction with a lower event id that commits late is delivered once, in its place, live and on resume', async () => {
    const deal = await newDeal();
    const otherConversation = await anotherConversation(deal, 'Another deal');
    const before = await openEvents({ token: deal.counterparty.accessToken });
    const mark = await send(deal.initiator.accessToken, deal.conversationId, 'mark');
    const markEvent = await before.next(isMessage(mark));
    let commitA!: () => void;
    const aMayCommit = new Promise<void>((r) => (commitA = r));
    let aInserted!: () => void;
    const aHasInserted = new Promise<void>((r) => (aInserted = r));
    const a = held.begin(async (tx) => {
      await tx`insert into public.messages (conversation_id, sender_id, content) values (${deal.conversationId}, ${deal.initiator.id}, 'lower id, committed last') `;
      aInserted();
      await aMayCommit;
    });
    await aHasInserted;
    const [b] = await held`
      insert into public.messages (conversation_id, sender_id, content)
      values (${otherConversation}, ${deal.initiator.id}, 'higher id, committed first') returning id`;
    await wake();
    // B is committed, but A, older, is not: B is held back
    await before.quiet(700);
    commitA();
    await a;
    await wake();
    const first = await before.next((e) => e.event === 'message');
    const second = await before.next((e) => e.event === 'message');
    expect(JSON.parse(first.data).content).toBe('lower id, committed last');
    expect(JSON.parse(second.data).id).toBe(b!.id);
    expect(Number(first.id)).toBeLessThan(Number(second.id));
    await before.quiet(300);
    before.close();
    // on resume from the mark: the same two, once each, in the same order
    const resumed = await openEvents({ token: deal.counterparty.accessToken, lastEventId: markEvent.id as string });
    await resumed.next(isMessage(b!.id));
    expect(messages(resumed.events).map((m) => m.content)).toEqual([
      'lower id, committed last',
      'higher id, committed first',
    ]);
    resumed.close();
  });

  it("a deleted escrow's conversation sends nothing more, live or on resume", async () => {
    const deal = await newDeal();
    const s = await openEvents({ token: deal.counterparty.accessToken });
    const id = await send(deal.initiator.accessToken, deal.conversationId, 'before the delete');
    const seen = await s.next(isMessage(id));
    s.close();
    const later = await send(deal.initiator.accessToken, deal.conversationId, 'just before the delete');
    const deleted = await post('escrow-delete', { escrow_id: deal.escrowId }, { token: deal.initiator.accessToken });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const resumed = await openEvents({ token: deal.counterparty.accessToken, lastEventId: seen.id as string });
    // the escrow's own change is told (escrow-get still answers a party about a deleted escrow)
    const gone = await resumed.next((e) => e.event === 'escrow');
    expect(JSON.parse(gone.data).status).toBe('deleted');
    await new Promise((r) => setTimeout(r, 300));
    expect(messages(resumed.events)).toEqual([]);
    resumed.close();
    expect(later).toBeTruthy();
  });

  it('more than 500 missed is one reset, whose id resumes after them; an id not theirs is a reset too', async () => {
    const user = await signUp();
    const s = await openEvents({ token: user.accessToken });
    await held`select private.event_write('wallet', ${user.id}::uuid, null, array[${user.id}::uuid])`;
    await wake();
    const first = await s.next((e) => e.event === 'wallet');
    s.close();
    await held`select private.event_write('wallet', ${user.id}::uuid, null, array[${user.id}::uuid]) from generate_series(1, 501)`;
    const resumed = await openEvents({ token: user.accessToken, lastEventId: first.id as string });
    const reset = await resumed.next();
    expect(reset.event).toBe('reset');
    expect(JSON.parse(reset.data)).toEqual({ reason: 'too_many_missed' });
    await resumed.quiet(300);
    expect(resumed.events).toHaveLength(1);
    resumed.close();
    const [last] = await testDb()<{ id: string }[]>`
      select max(event_id)::text as id from private.event_recipients where user_id = ${user.id}`;
    expect(reset.id).toBe(last!.id);
    const after = await openEvents({ token: user.accessToken, lastEventId: reset.id as string });
    await after.quiet(300);
    expect(after.events).toEqual([]);
    after.close();
    // another user's event id tells nothing, and replays nothing
    const stranger = await signUp();
    const probe = await openEvents({ token: stranger.accessToken, lastEventId: first.id as string });
    const unknown = await probe.next();
    expect(unknown.event).toBe('reset');
    expect(JSON.parse(unknown.data)).toEqual({ reason: 'unknown_position' });
    probe.close();
  });

  it('a logout ends the stream within one heartbeat; the session is needed to open one', async () => {
    const user = await signUp();
    const s = await openEvents({ token: user.accessToken });
    const out = await post(authLogout, undefined, { method: 'POST', token: user.accessToken });
    expect(out.status).toBe(200);
    const started = Date.now();
    await s.ended;
    expect(Date.now() - started).toBeLessThan(2_000 + 1_500);
    const again = await openEvents({ token: user.accessToken });
    expect(again.status).toBe(401);
    expect(again.refusal?.code).toBe('unauthenticated');
  });

  it(
    'ends after STREAM_MAX_SECONDS (10 on the test stack) with a retry: hint, with heartbeats on the way',
    async () => {
      const user = await signUp();
      const s = await openEvents({ token: user.accessToken });
      await s.ended;
      expect(s.comments).toContain('heartbeat');
      expect(s.retry).toBeGreaterThanOrEqual(1_000);
      expect(s.retry).toBeLessThan(2_001);
    },
    20_000,
  );

  it('refuses before the stream: no token, a bad token, a malformed Last-Event-ID, a sixth stream (429)', async () => {
    const none = await openEvents();
    expect(none.status).toBe(401);
    const bad = await openEvents({ token: 'not-a-jwt' });
    expect(bad.status).toBe(401);
    const user = await signUp();
    const malformed = await openEvents({ token: user.accessToken, headers: { 'Last-Event-ID': '12abc' } });
    expect(malformed.status).toBe(400);
    expect(malformed.refusal?.code).toBe('validation_failed');
    const open = [];
    for (let i = 0; i < 5; i++) open.push(await openEvents({ token: user.accessToken }));
    expect(open.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await openEvents({ token: user.accessToken });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    open[0]!.close();
    await open[0]!.ended;
    await new Promise((r) => setTimeout(r, 100));
    const replacement = await openEvents({ token: user.accessToken });
    expect(replacement.status).toBe(200);
    for (const s of [...open, replacement]) s.close();
  });
});

describe('events-ticket', () => {
  it('opens the stream of its session with ?ticket=, for reconnects too, and is kept only hashed', async () => {
    const deal = await newDeal();
    const made = await post(eventsTicket, undefined, { method: 'POST', token: deal.counterparty.accessToken });
    expect(made.status).toBe(201);
    const { ticket, expires_in } = made.body.data;
    expect(expires_in).toBe(600);
    for (let i = 0; i < 2; i++) {
      const s = await openEvents({ ticket });
      expect(s.status).toBe(200);
      const id = await send(deal.initiator.accessToken, deal.conversationId, `by ticket ${i}`);
      await s.next(isMessage(id));
      s.close();
    }
    const stored = await testDb()<{ hash: string }[]>`
      select encode(t.hash, 'hex') as hash from private.stream_tickets t
        join private.sessions s on s.id = t.session_id where s.user_id = ${deal.counterparty.id}`;
    expect(stored).toEqual([{ hash: ticketHash(ticket) }]);
  });

  it('stops when it expires or its session ends; a made-up ticket is a 401', async () => {
    const user = await signUp();
    const made = await post(eventsTicket, undefined, { method: 'POST', token: user.accessToken });
    const { ticket } = made.body.data;
    const madeUp = await openEvents({ ticket: `est_${'A'.repeat(43)}` });
    expect(madeUp.status).toBe(401);
    // with the header too, the header is used
    const both = await openEvents({ ticket: `est_${'A'.repeat(43)}`, token: user.accessToken });
    expect(both.status).toBe(200);
    both.close();
    const malformed = await openEvents({ ticket: 'est_short' });
    expect(malformed.status).toBe(401);
    // ten minutes later
    const second = (await post(eventsTicket, undefined, { method: 'POST', token: user.accessToken })).body.data.ticket;
    await testDb()`
      update private.stream_tickets set expires_at = now() - interval '1 second' where hash = decode(${
      ticketHash(ticket)
    }, 'hex')`;
    expect((await openEvents({ ticket })).status).toBe(401);
    const live = await openEvents({ ticket: second });
    expect(live.status).toBe(200);
    // the session ends: the open stream at its next heartbeat, and the ticket at once
    await post(authLogout, undefined, { method: 'POST', token: user.accessToken });
    await live.ended;
    expect((await openEvents({ ticket: second })).status).toBe(401);
    expect((await post(eventsTicket, undefined, { method: 'POST', token: user.accessToken })).status).toBe(401);
  });
});
