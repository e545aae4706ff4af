// Conversations through the real HTTP server: message-send (who may write, what, and until when),
// message-feed (the caller's merged view, exact before/after cursors when many items share a
// created_at, polling), conversation-list and conversation-read.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type DataOf, expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { type Deal, escrowOp, fundedDeal, newDeal } from '../support/escrows.ts';
import { newPhone, signUp, type TestUser, verifyPhone } from '../support/users.ts';
import { micros } from '../support/time.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import conversationList from '../../supabase/functions/conversation-list/handler.ts';
import conversationRead from '../../supabase/functions/conversation-read/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const send = (user: TestUser, conversationId: string, content: string, extra: Record<string, never> = {}) =>
  post(messageSend, { conversation_id: conversationId, content, ...extra }, { token: user.accessToken });
const feed = (user: TestUser, query: Record<string, string | number | undefined>) =>
  get(messageFeed, { token: user.accessToken, query });
const conversations = (user: TestUser, query: Record<string, string | number | undefined> = {}) =>
  get(conversationList, { token: user.accessToken, query });
const markRead = (user: TestUser, conversationId: string) =>
  post(conversationRead, { conversation_id: conversationId }, { token: user.accessToken });

/** The single row of a count query (typed for the compiler). */
const one =
  (sql: ReturnType<typeof testDb>) =>
  async (strings: TemplateStringsArray, ...values: Parameters<ReturnType<typeof testDb>>[1][]) =>
    ((await sql(strings, ...values)) as unknown as { n: number }[])[0] as { n: number };

/** An item of message-feed: a message or a notification of the conversation's escrow. */
type FeedItem = DataOf<typeof messageFeed>[number];

function expectStrictlyIncreasing(items: { created_at: string }[]) {
  for (let i = 1; i < items.length; i++) {
    expect(micros(items[i]!.created_at) > micros(items[i - 1]!.created_at), `${i}`).toBe(true);
  }
}

/** The whole feed of a user, paged backwards from the newest with `before` (oldest first). */
async function feedBackwards(user: TestUser, conversationId: string, limit: number): Promise<FeedItem[]> {
  const pages: FeedItem[][] = [];
  let before: string | undefined;
  for (;;) {
    const page = ok(await feed(user, { conversation_id: conversationId, limit, before }));
    pages.unshift(page);
    if (page.length < limit) break;
    before = page[0]!.created_at;
  }
  return pages.flat();
}

/** The whole feed of a user, paged forwards from the oldest with `after` (oldest first). */
async function feedForwards(user: TestUser, conversationId: string, limit: number): Promise<FeedItem[]> {
  const items: FeedItem[] = [];
  let after = '2000-01-01T00:00:00Z';
  for (;;) {
    const page = ok(await feed(user, { conversation_id: conversationId, limit, after }));
    items.push(...page);
    if (page.length < limit) break;
    after = page[page.length - 1]!.created_at;
  }
  return items;
}

/** A user signed up with the given phone (an invited counterparty joining later). */
async function signUpWith(phone: string, firstName: string): Promise<TestUser> {
  await verifyPhone(phone);
  const password = 'a sound passphrase';
  const res = await post(authSignup, { phone, first_name: firstName, last_name: 'Later', password });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return {
    id: res.body.data.user.id,
    phone,
    password,
    accessToken: res.body.data.session.access_token,
    refreshToken: res.body.data.session.refresh_token,
  };
}

const FEED_KEYS = [
  'action_label',
  'content',
  'created_at',
  'entity_id',
  'entity_type',
  'escrow_id',
  'event_type',
  'id',
  'is_read',
  'message_type',
  'sender_avatar_url',
  'sender_first_name',
  'sender_id',
  'sender_last_name',
  'source',
];

// ---- message-send --------------------------------------------------------------------------

describe('message-send', () => {
  it('answers 201 with the feed item: trimmed content, the sender and their names', async () => {
    const deal = await newDeal();
    const item = ok(await send(deal.initiator, deal.conversationId, '  Is it still available?\n  '), 201);
    expect(Object.keys(item).sort()).toEqual(FEED_KEYS);
    expect(item).toMatchObject({
      source: 'message',
      content: 'Is it still available?',
      escrow_id: deal.escrowId,
      sender_id: deal.initiator.id,
      message_type: 'text',
      sender_first_name: 'Ini',
      sender_last_name: 'Obi',
      sender_avatar_url: null,
      event_type: null,
      entity_type: null,
      entity_id: null,
      action_label: null,
      is_read: null,
    });
    // both parties read it in the feed, as the same item
    for (const user of [deal.initiator, deal.counterparty]) {
      const items = ok(await feed(user, { conversation_id: deal.conversationId }));
      expect(items.filter((i) => i.source === 'message')).toEqual([item]);
    }
  });

  it('refuses empty, blank, too long, NUL-bearing content and unknown types, naming the field', async () => {
    const deal = await newDeal();
    const cases: [unknown, Record<string, unknown>, string][] = [
      ['', {}, 'content'],
      ['   \n\t ', {}, 'content'],
      ['x'.repeat(4001), {}, 'content'],
      [`  ${'x'.repeat(4001)}`, {}, 'content'],
      ['hello\u0000world', {}, 'content'],
      [42, {}, 'content'],
      [null, {}, 'content'],
      ['hi', { message_type: 'image' }, 'message_type'],
      ['hi', { colour: 'red' }, 'colour'],
    ];
    for (const [content, extra, field] of cases) {
      // @ts-expect-error the table holds contents and fields the schema refuses, on purpose
      expect(refused(await send(deal.initiator, deal.conversationId, content, extra), 400)).toContain(field);
    }
    expect(refused(await send(deal.initiator, 'not-a-uuid', 'hi'), 400)).toEqual(['conversation_id']);
    // nothing was stored
    const { n } = await one(testDb())`
      select count(*)::int as n from public.messages where conversation_id = ${deal.conversationId}`;
    expect(n).toBe(0);
  });

  it('takes exactly 4000 characters, counted as people count them (an emoji is one)', async () => {
    const deal = await newDeal();
    const plain = ok(await send(deal.initiator, deal.conversationId, ` ${'a'.repeat(4000)} `), 201);
    expect(plain.content).toHaveLength(4000);
    const emoji = ok(await send(deal.initiator, deal.conversationId, '😀'.repeat(4000)), 201);
    expect([...emoji.content]).toHaveLength(4000);
    expect(refused(await send(deal.initiator, deal.conversationId, '😀'.repeat(4001)), 400)).toEqual(['content']);
  });

  it('is 404 to anyone but the two parties, and to an unknown conversation', async () => {
    const deal = await newDeal();
    const stranger = await signUp({ first_name: 'Str' });
    refused(await send(stranger, deal.conversationId, 'let me in'), 404, 'conversation_not_found');
    const stray = await send(deal.initiator, randomUUID(), 'hello?');
    refused(stray, 404, 'conversation_not_found');
    expect(stray.body.error).toBe('Conversation not found');
    expect(refused(await feed(stranger, { conversation_id: deal.conversationId }), 404, 'conversation_not_found'))
      .toEqual([]);
    refused(await markRead(stranger, deal.conversationId), 404, 'conversation_not_found');
    expect(ok(await conversations(stranger))).toEqual([]);
    // the same answer as for a conversation that does not exist
    const unknown = await feed(stranger, { conversation_id: randomUUID() });
    const real = await feed(stranger, { conversation_id: deal.conversationId });
    expect(real.body.error).toBe(unknown.body.error);
  });

  it('an invited counterparty reads and writes only once their account is linked to the escrow', async () => {
    const initiator = await signUp({ first_name: 'Ini' });
    const invited = newPhone().e164;
    const created = ok(
      await post(escrowCreate, {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Phone',
        counterparty_phone: invited,
        amount: 5_000,
      }, { token: initiator.accessToken }),
      201,
    );
    const conversationId = created.conversation_id;
    ok(await send(initiator, conversationId, 'Sign up and we can talk here'), 201);
    // someone else, who is not the invited phone, is a stranger to it
    const other = await signUp({ first_name: 'Other' });
    refused(await feed(other, { conversation_id: conversationId }), 404, 'conversation_not_found');
    refused(await send(other, conversationId, 'hi'), 404, 'conversation_not_found');
    // the invited phone signs up: linked at once, reads the conversation and answers
    const invitee = await signUpWith(invited, 'Newcomer');
    const items = ok(await feed(invitee, { conversation_id: conversationId }));
    expect(items.filter((i) => i.source === 'message').map((i) => i.content)).toEqual([
      'Sign up and we can talk here',
    ]);
    ok(await send(invitee, conversationId, 'Here now'), 201);
  });

  it("a deleted escrow's conversation is gone for both parties", async () => {
    const deal = await newDeal();
    ok(await send(deal.counterparty, deal.conversationId, 'before the delete'), 201);
    ok(await escrowOp('escrow-delete', deal.initiator, deal.escrowId));
    for (const user of [deal.initiator, deal.counterparty]) {
      refused(await send(user, deal.conversationId, 'after the delete'), 404, 'conversation_not_found');
      refused(await feed(user, { conversation_id: deal.conversationId }), 404, 'conversation_not_found');
      refused(await markRead(user, deal.conversationId), 404, 'conversation_not_found');
      const listed = ok(await conversations(user, { limit: 50 }));
      expect(listed.map((c) => c.conversation_id)).not.toContain(deal.conversationId);
    }
  });

  it('a closed deal stays writable for 30 days after it closed, then read-only (409)', async () => {
    const deal = await fundedDeal({ amount: 2_000 });
    ok(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    ok(await send(deal.payee, deal.conversationId, 'Thanks!'), 201);
    const db = testDb();
    // 29 days and 23 hours after the release: still open
    await db`update public.escrows set released_at = now() - interval '29 days 23 hours' where id = ${deal.escrowId}`;
    ok(await send(deal.payer, deal.conversationId, 'Enjoy it'), 201);
    // 30 days and a minute: read-only for both, still readable
    await db`update public.escrows set released_at = now() - interval '30 days 1 minute' where id = ${deal.escrowId}`;
    for (const user of [deal.payer, deal.payee]) {
      const r = await send(user, deal.conversationId, 'one more thing');
      refused(r, 409, 'conversation_read_only');
      expect(r.body.error).toMatch(/read-only/);
      const items = ok(await feed(user, { conversation_id: deal.conversationId }));
      expect(items.filter((i) => i.source === 'message').map((i) => i.content)).toEqual([
        'Thanks!',
        'Enjoy it',
      ]);
    }
    // the same for a cancelled deal, counted from cancelled_at
    const other = await newDeal();
    ok(await escrowOp('escrow-cancel', other.initiator, other.escrowId));
    ok(await send(other.counterparty, other.conversationId, 'why?'), 201);
    await db`update public.escrows set cancelled_at = now() - interval '31 days' where id = ${other.escrowId}`;
    refused(await send(other.initiator, other.conversationId, 'because'), 409, 'conversation_read_only');
  });

  it('an Idempotency-Key makes a retried send one message', async () => {
    const deal = await newDeal();
    const headers = { 'Idempotency-Key': `msg-${randomUUID()}` };
    const body = { conversation_id: deal.conversationId, content: 'Paid the deposit' };
    const first = ok(await post(messageSend, body, { token: deal.initiator.accessToken, headers }), 201);
    const again = await post(messageSend, body, { token: deal.initiator.accessToken, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first);
    const { n } = await one(testDb())`
      select count(*)::int as n from public.messages where conversation_id = ${deal.conversationId}`;
    expect(n).toBe(1);
  });

  it('limits how fast one user sends (30 a minute): 429 with Retry-After, nothing stored', async () => {
    const deal = await newDeal();
    for (let i = 0; i < 30; i++) ok(await send(deal.initiator, deal.conversationId, `message ${i}`), 201);
    const r = await send(deal.initiator, deal.conversationId, 'one too many');
    refused(r, 429, 'rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.body.error).toMatch(/^Too many messages: you can send another in (\d+ seconds?|1 minute)$/);
    // the other party is not limited by it
    ok(await send(deal.counterparty, deal.conversationId, 'slow down'), 201);
    const { n } = await one(testDb())`
      select count(*)::int as n from public.messages where conversation_id = ${deal.conversationId}`;
    expect(n).toBe(31);
  });
});

// ---- message-feed --------------------------------------------------------------------------

describe('message-feed', () => {
  it("merges the messages with the caller's own notifications of the escrow, oldest first", async () => {
    const deal = await fundedDeal({ amount: 3_000 });
    ok(await send(deal.counterparty, deal.conversationId, 'Shipping today'), 201);
    ok(await escrowOp('escrow-deliver', deal.payee, deal.escrowId));
    ok(await send(deal.initiator, deal.conversationId, 'Got it'), 201);
    for (const user of [deal.initiator, deal.counterparty]) {
      const items = ok(await feed(user, { conversation_id: deal.conversationId }));
      expectStrictlyIncreasing(items);
      const notifications = items.filter((i) => i.source === 'notification');
      const { n } = await one(testDb())`
        select count(*)::int as n from public.notifications where conversation_id = ${deal.conversationId}
           and user_id = ${user.id}`;
      expect(notifications).toHaveLength(n);
      expect(n).toBeGreaterThan(0);
      // the notifications are the caller's, as notification-list shows them
      const listed = ok(
        await get(notificationList, { token: user.accessToken, query: { escrow_id: deal.escrowId } }),
      );
      const byId = new Map(listed.map((x) => [x.id, x]));
      for (const item of notifications) {
        const x = byId.get(item.id)!;
        expect(x, item.id).toBeDefined();
        expect(item).toMatchObject({
          content: x.content,
          event_type: x.event_type,
          entity_type: x.entity_type,
          entity_id: x.entity_id,
          action_label: x.action_label,
          is_read: x.is_read,
          created_at: x.created_at,
          sender_id: null,
          message_type: null,
          sender_first_name: null,
        });
      }
      expect(items.filter((i) => i.source === 'message').map((i) => i.content)).toEqual([
        'Shipping today',
        'Got it',
      ]);
      // the message from the counterparty comes before the delivery notification, which comes
      // before the initiator's answer
      const delivered = items.findIndex((i) => i.event_type === 'delivered');
      const shipping = items.findIndex((i) => i.content === 'Shipping today');
      const gotIt = items.findIndex((i) => i.content === 'Got it');
      if (delivered >= 0) expect(shipping < delivered && delivered < gotIt).toBe(true);
    }
  });

  it('pages exactly with before and after when hundreds of items are written in one transaction', async () => {
    const deal = await newDeal();
    const db = testDb();
    // one transaction: now() is the same for every row, so every created_at would tie without
    // the conversation's clock. 150 messages from both parties and 60 notifications for each.
    const [template] = await db<{ message: unknown }[]>`
      select message from public.notifications where conversation_id = ${deal.conversationId} limit 1`;
    await db.begin(async (tx) => {
      for (let i = 0; i < 150; i++) {
        const sender = i % 2 === 0 ? deal.initiator.id : deal.counterparty.id;
        await tx`insert into public.messages (conversation_id, sender_id, content)
                 values (${deal.conversationId}, ${sender}, ${`bulk ${i}`})`;
        if (i % 5 === 0) {
          for (const user of [deal.initiator.id, deal.counterparty.id]) {
            await tx`select private.notify(${user}, ${deal.escrowId}, 'escrow_created', ${
              tx.json(template!.message as never)
            }, 'escrow', ${deal.escrowId}, 'View escrow')`;
          }
        }
      }
    });
    for (const user of [deal.initiator, deal.counterparty]) {
      const expected = await db<{ id: string }[]>`
        select id, created_at from (
          select id, created_at from public.messages where conversation_id = ${deal.conversationId}
          union all
          select id, created_at from public.notifications where conversation_id = ${deal.conversationId}
             and user_id = ${user.id}
        ) i order by created_at`;
      expect(expected.length).toBeGreaterThanOrEqual(150 + 30); // and the escrow's own notifications
      for (const limit of [1, 7, 100, 200]) {
        const back = await feedBackwards(user, deal.conversationId, limit);
        expect(back.map((i) => i.id), `before, limit ${limit}`).toEqual(expected.map((r) => r.id));
        expectStrictlyIncreasing(back);
        const forward = await feedForwards(user, deal.conversationId, limit);
        expect(forward.map((i) => i.id), `after, limit ${limit}`).toEqual(expected.map((r) => r.id));
      }
    }
  });

  it('polling with after returns exactly what is new, including many sent at once', async () => {
    const deal = await newDeal();
    ok(await send(deal.initiator, deal.conversationId, 'first'), 201);
    let items = ok(await feed(deal.counterparty, { conversation_id: deal.conversationId }));
    let last = items[items.length - 1]!.created_at;
    expect(ok(await feed(deal.counterparty, { conversation_id: deal.conversationId, after: last }))).toEqual([]);
    // 20 messages from both sides at the same moment
    const sent = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => send(i % 2 ? deal.initiator : deal.counterparty, deal.conversationId, `m${i}`),
      ),
    );
    for (const r of sent) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const seen: FeedItem[] = [];
    for (;;) {
      const page = ok(await feed(deal.counterparty, { conversation_id: deal.conversationId, after: last, limit: 3 }));
      seen.push(...page);
      if (page.length < 3) break;
      last = page[page.length - 1]!.created_at;
    }
    expect(seen.map((i) => i.content).sort()).toEqual(sent.map((r) => r.body.data.content).sort());
    expectStrictlyIncreasing(seen);
    items = ok(await feed(deal.initiator, { conversation_id: deal.conversationId, limit: 200 }));
    expectStrictlyIncreasing(items);
    expect(items.filter((i) => i.source === 'message')).toHaveLength(21);
  });

  it('messages racing transitions, reads and marks: every request succeeds and the feed stays in order', async () => {
    const deal = await fundedDeal({ amount: 4_000, category: 'auto_dealership' });
    const chat = (n: number) =>
      Array.from({ length: n }, (_, i) => send(i % 2 ? deal.payer : deal.payee, deal.conversationId, `race ${n} ${i}`));
    const first = await Promise.all([
      escrowOp('escrow-deliver', deal.payee, deal.escrowId),
      ...chat(16),
      markRead(deal.payer, deal.conversationId),
      markRead(deal.payee, deal.conversationId),
      feed(deal.payer, { conversation_id: deal.conversationId }),
    ]);
    for (const r of first) expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    const second = await Promise.all([escrowOp('escrow-release', deal.payer, deal.escrowId), ...chat(12)]);
    for (const r of second) expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    for (const user of [deal.payer, deal.payee]) {
      const items = ok(await feed(user, { conversation_id: deal.conversationId, limit: 200 }));
      expectStrictlyIncreasing(items);
      expect(items.filter((i) => i.source === 'message')).toHaveLength(28);
      expect(items.some((i) => i.event_type === 'released')).toBe(true);
    }
  });

  it('validates its query: limit 1-200 (default 100), timestamps, not before and after together', async () => {
    const deal = await newDeal();
    const q = (extra: Record<string, string | number>) =>
      feed(deal.initiator, { conversation_id: deal.conversationId, ...extra });
    expect(refused(await q({ limit: 0 }), 400)).toEqual(['limit']);
    expect(refused(await q({ limit: 201 }), 400)).toEqual(['limit']);
    expect(refused(await q({ limit: 'ten' }), 400)).toEqual(['limit']);
    expect(refused(await q({ before: 'yesterday' }), 400)).toEqual(['before']);
    expect(refused(await q({ after: '2026-13-01T00:00:00Z' }), 400)).toEqual(['after']);
    expect(refused(await q({ before: '2030-01-01T00:00:00Z', after: '2020-01-01T00:00:00Z' }), 400)).toEqual([
      'after',
    ]);
    expect(refused(await feed(deal.initiator, {}), 400)).toEqual(['conversation_id']);
    ok(await q({ limit: 200 }));
    // the default page is the newest 100
    const db = testDb();
    await db.begin(async (tx) => {
      for (let i = 0; i < 120; i++) {
        await tx`insert into public.messages (conversation_id, sender_id, content)
                 values (${deal.conversationId}, ${deal.initiator.id}, ${`n${i}`})`;
      }
    });
    const page = ok(await feed(deal.initiator, { conversation_id: deal.conversationId }));
    expect(page).toHaveLength(100);
    expect(page[page.length - 1]!.content).toBe('n119');
  });
});

// ---- conversation-list and conversation-read -----------------------------------------------

describe('conversation-list', () => {
  it('lists the caller’s conversations by newest activity, with the last item and unread count', async () => {
    const me = await signUp({ first_name: 'Me', last_name: 'Self' });
    const deals: { conversationId: string; escrowId: string; other: TestUser }[] = [];
    for (const name of ['Ada', 'Bola', 'Chidi']) {
      const other = await signUp({ first_name: name, last_name: 'Party' });
      const created = ok(
        await post(escrowCreate, {
          category: 'goods_products',
          payer_role: 'initiator',
          title: `Deal with ${name}`,
          counterparty_phone: other.phone,
          amount: 1_000,
        }, { token: me.accessToken }),
        201,
      );
      deals.push({ conversationId: created.conversation_id, escrowId: created.escrow_id, other });
    }
    // newest first: the last created
    let list = ok(await conversations(me));
    expect(list.map((c) => c.conversation_id)).toEqual(deals.map((d) => d.conversationId).reverse());
    const first = list[2];
    expect(first).toMatchObject({
      escrow_id: deals[0]!.escrowId,
      escrow_title: 'Deal with Ada',
      escrow_status: 'draft',
      // not accepted yet: nothing tells the initiator who holds the phone
      counterparty_first_name: null,
      counterparty_last_name: null,
      unread_count: 1,
    });
    expect(first!.last_item).toMatchObject({ source: 'notification', event_type: 'escrow_created' });
    expect(first!.last_activity_at).toBe(first!.last_item!.created_at);
    // a message in the oldest conversation brings it to the top
    const msg = ok(await send(deals[0]!.other, deals[0]!.conversationId, 'Hello from Ada'), 201);
    list = ok(await conversations(me));
    expect(list[0]!.conversation_id).toBe(deals[0]!.conversationId);
    expect(list[0]!.last_item).toEqual(msg);
    expect(list[0]!.last_activity_at).toBe(msg.created_at);
    // Ada wrote in it: her names are no secret any more
    expect(list[0]).toMatchObject({ counterparty_first_name: 'Ada', counterparty_last_name: 'Party' });
    expect(list.find((c) => c.conversation_id === deals[1]!.conversationId)).toMatchObject({
      counterparty_first_name: null,
    });
    // the counterparty sees the initiator's names
    const theirs = ok(await conversations(deals[0]!.other));
    expect(theirs[0]).toMatchObject({ counterparty_first_name: 'Me', counterparty_last_name: 'Self' });
    // paging with before on last_activity_at
    const page1 = ok(await conversations(me, { limit: 2 }));
    const page2 = ok(await conversations(me, { limit: 2, before: page1[1]!.last_activity_at }));
    expect([...page1, ...page2].map((c) => c.conversation_id)).toEqual(list.map((c) => c.conversation_id));
    expect(page2).toHaveLength(1);
    expect(refused(await conversations(me, { limit: 51 }), 400)).toEqual(['limit']);
  });

  it('shows the counterparty’s names once they accepted', async () => {
    const deal: Deal = await newDeal({ payerRole: 'counterparty' });
    const [before] = ok(await conversations(deal.initiator));
    expect(before).toMatchObject({ conversation_id: deal.conversationId, counterparty_first_name: null });
    ok(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId));
    const [c] = ok(await conversations(deal.initiator)).filter((x) => x.conversation_id === deal.conversationId);
    expect(c).toMatchObject({ counterparty_first_name: 'Cou', counterparty_last_name: 'Obi' });
  });
});

describe('conversation-read', () => {
  it("marks the caller's notifications of that conversation read, and only theirs", async () => {
    const deal = await fundedDeal({ amount: 2_500 });
    const unread = async (user: TestUser) => {
      const { n } = await one(testDb())`
        select count(*)::int as n from public.notifications
         where conversation_id = ${deal.conversationId} and user_id = ${user.id} and not is_read`;
      return n as number;
    };
    const mine = await unread(deal.initiator);
    const theirs = await unread(deal.counterparty);
    expect(mine).toBeGreaterThan(0);
    expect(theirs).toBeGreaterThan(0);
    expect(ok(await markRead(deal.initiator, deal.conversationId))).toEqual({ updated: mine });
    expect(await unread(deal.initiator)).toBe(0);
    expect(await unread(deal.counterparty)).toBe(theirs);
    expect(ok(await markRead(deal.initiator, deal.conversationId))).toEqual({ updated: 0 });
    const items = ok(await feed(deal.initiator, { conversation_id: deal.conversationId }));
    expect(items.filter((i) => i.source === 'notification').every((i) => i.is_read === true)).toBe(true);
    const [listed] = ok(await conversations(deal.initiator)).filter((c) => c.conversation_id === deal.conversationId);
    expect(listed!.unread_count).toBe(0);
    // @ts-expect-error a body missing its field, on purpose
    expect(refused(await post(conversationRead, {}, { token: deal.initiator.accessToken }), 400)).toEqual([
      'conversation_id',
    ]);
  });
});
