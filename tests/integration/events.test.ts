// The event log (supabase/migrations/20261127140000_events.sql): what happened is written with its
// effect, for its recipients only, and read in commit order, (xact, id), below the commit horizon
// (supabase/migrations/20261127150000_event_streams.sql), so that an event whose transaction
// commits late is neither passed over nor delivered twice.
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { anotherConversation, escrowOp, fundedDeal, newDeal } from '../support/escrows.ts';
import { signUp } from '../support/users.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';

interface EventRow {
  id: string;
  xact: string;
  kind: string;
  subject_id: string;
  escrow_id: string | null;
  data: Record<string, unknown>;
}

/** A place in the log: the last event a reader took (none: the start). */
type Place = Pick<EventRow, 'id' | 'xact'> | undefined;

const eventsOf = async (userId: string, after?: Place, limit = 500) =>
  await testDb()<EventRow[]>`select id::text, xact::text, kind, subject_id, escrow_id, data
                              from private.events_after(${userId}, ${after?.xact ?? '0'}::xid8, ${
    after?.id ?? '0'
  }::bigint, ${limit})`;

const recipientsOf = async (eventId: string) =>
  (await testDb()<{ user_id: string }[]>`
    select user_id from private.event_recipients where event_id = ${eventId} order by user_id`).map((r) => r.user_id);

// connections of their own, to hold transactions open
const held = postgres(inject('databaseUrl'), { max: 2, onnotice: () => {} });
afterAll(() => held.end());

describe('writing', () => {
  it('a message is an event for both parties, and for no one else', async () => {
    const deal = await newDeal();
    const before = await eventsOf(deal.counterparty.id);
    const last = before.at(-1);
    const sent = await post(messageSend, { conversation_id: deal.conversationId, content: 'Is it still available?' }, {
      token: deal.initiator.accessToken,
    });
    expect(sent.status).toBe(201);
    const [event] = (await eventsOf(deal.counterparty.id, last)).filter((e) => e.kind === 'message');
    expect(event).toMatchObject({ subject_id: sent.body.data.id, escrow_id: deal.escrowId, data: {} });
    expect(await recipientsOf(event!.id)).toEqual([deal.initiator.id, deal.counterparty.id].sort());
    const stranger = await signUp();
    expect(await eventsOf(stranger.id)).toEqual([]);
  });

  it('an escrow funded, accepted and released: escrow, notification and wallet events, facts only', async () => {
    const deal = await fundedDeal({ title: 'Event log "test"' });
    await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
    await escrowOp('escrow-release', deal.payer, deal.escrowId);
    const payee = await eventsOf(deal.payee.id);
    const statuses = payee.filter((e) => e.kind === 'escrow' && e.subject_id === deal.escrowId).map((e) =>
      e.data.status
    );
    expect(statuses).toEqual(expect.arrayContaining(['funded', 'released']));
    expect(payee.some((e) => e.kind === 'notification' && e.escrow_id === deal.escrowId)).toBe(true);
    expect(payee.some((e) => e.kind === 'wallet' && e.subject_id === deal.payee.id)).toBe(true);
    // ids in order, and no names, titles or phones in the facts
    const ids = payee.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const text = JSON.stringify(payee.map((e) => e.data));
    expect(text).not.toContain('Event log');
    expect(text).not.toContain(deal.payer.phone);
  });

  it('a refused or rolled-back write leaves no event', async () => {
    const deal = await newDeal();
    const stranger = await signUp();
    const before = await eventsOf(deal.initiator.id);
    const refused = await post(messageSend, { conversation_id: deal.conversationId, content: 'hello' }, {
      token: stranger.accessToken,
    });
    expect(refused.status).toBe(404);
    await held.begin(async (tx) => {
      await tx`insert into public.messages (conversation_id, sender_id, content) values (${deal.conversationId}, ${deal.initiator.id}, 'gone')`;
      throw new Error('roll back');
    }).catch(() => {});
    expect(await eventsOf(deal.initiator.id)).toEqual(before);
  });
});

describe('reading below the commit horizon', () => {
  it('an event whose transaction commits late is delivered once, in its place, never passed over', async () => {
    // two conversations of one user (a message takes its conversation's lock until commit)
    const deal = await newDeal();
    const secondConversation = await anotherConversation(deal, 'Second deal');
    const start = (await eventsOf(deal.initiator.id)).at(-1);
    // A takes the lower id and stays open; B takes a higher one and commits
    let releaseA!: () => void;
    const aOpen = new Promise<void>((r) => (releaseA = r));
    let aInserted!: () => void;
    const aHasInserted = new Promise<void>((r) => (aInserted = r));
    const a = held.begin(async (tx) => {
      await tx`insert into public.messages (conversation_id, sender_id, content) values (${deal.conversationId}, ${deal.initiator.id}, 'first, committed last')`;
      aInserted();
      await aOpen;
    });
    await aHasInserted;
    await held.begin(async (tx) => {
      await tx`insert into public.messages (conversation_id, sender_id, content) values (${secondConversation}, ${deal.counterparty.id}, 'second, committed first')`;
    });
    // B is committed, but A (a lower id) is not: nothing after the start is deliverable yet
    expect((await eventsOf(deal.initiator.id, start)).filter((e) => e.kind === 'message')).toEqual([]);
    releaseA();
    await a;
    const delivered = (await eventsOf(deal.initiator.id, start)).filter((e) => e.kind === 'message');
    expect(delivered).toHaveLength(2);
    const contents = await testDb()<{ content: string }[]>`
      select content from public.messages where id = any(${delivered.map((e) => e.subject_id)}::uuid[])`;
    expect(contents.map((c) => c.content).sort()).toEqual(['first, committed last', 'second, committed first']);
    expect(Number(delivered[0]!.id)).toBeLessThan(Number(delivered[1]!.id));
    // read again from the last one: nothing repeats
    expect((await eventsOf(deal.initiator.id, delivered[1])).filter((e) => e.kind === 'message')).toEqual([]);
  });
  it('a transaction that took its transaction id first and its event id last is read in its place', async () => {
    // B takes a transaction id, then A takes a later one and the lower event id and stays open, then
    // B writes the higher event id and commits: read by id, B's event would be taken (its
    // transaction is older than every one still running) and A's passed over once it commits
    const deal = await newDeal();
    const secondConversation = await anotherConversation(deal, 'Third deal');
    const start = (await eventsOf(deal.initiator.id)).at(-1);
    const steps = new Map<string, () => void>();
    const reached = (name: string) => new Promise<void>((r) => steps.set(name, r));
    const go = (name: string) => steps.get(name)!();
    const bHasXid = reached('b has xid');
    const bWrite = reached('b write');
    const aInsertedP = reached('a inserted');
    const aCommit = reached('a commit');
    const b = held.begin(async (tx) => {
      await tx`select pg_current_xact_id()`;
      go('b has xid');
      await bWrite;
      await tx`insert into public.messages (conversation_id, sender_id, content) values (${secondConversation}, ${deal.counterparty.id}, 'older transaction, higher id')`;
    });
    await bHasXid;
    const a = held.begin(async (tx) => {
      await tx`insert into public.messages (conversation_id, sender_id, content) values (${deal.conversationId}, ${deal.initiator.id}, 'newer transaction, lower id')`;
      go('a inserted');
      await aCommit;
    });
    await aInsertedP;
    go('b write');
    await b;
    // B is committed and older than A, so it may be read now; A is not, and must not be lost
    const first = (await eventsOf(deal.initiator.id, start)).filter((e) => e.kind === 'message');
    expect(first).toHaveLength(1);
    go('a commit');
    await a;
    const rest = (await eventsOf(deal.initiator.id, first[0])).filter((e) => e.kind === 'message');
    expect(rest).toHaveLength(1);
    expect(Number(rest[0]!.id)).toBeLessThan(Number(first[0]!.id));
    const contents = await testDb()<{ content: string }[]>`
      select content from public.messages where id = any(${[first[0]!.subject_id, rest[0]!.subject_id]}::uuid[])`;
    expect(contents.map((c) => c.content).sort()).toEqual([
      'newer transaction, lower id',
      'older transaction, higher id',
    ]);
  });
});
