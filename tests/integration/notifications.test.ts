// Notifications through the real HTTP server: every transition writes notifications to the
// parties it concerns (checked along whole paths), notification-list (filters, limits, exact
// newest-first paging with the before cursor, isolation between users) and notification-read
// (one, or all of an escrow's, for the caller only).
import { describe, expect, it } from 'vitest';
import {
  type ApiResult,
  type DataOf,
  expectError as refused,
  expectOk as ok,
  get,
  patch,
  post,
} from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { type Deal, escrowOp, fundedDeal, fundWallet, newDeal } from '../support/escrows.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { micros } from '../support/time.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import milestoneApprove from '../../supabase/functions/milestone-approve/handler.ts';
import milestoneComplete from '../../supabase/functions/milestone-complete/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import milestoneRelease from '../../supabase/functions/milestone-release/handler.ts';
import milestoneUpdate from '../../supabase/functions/milestone-update/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import notificationRead from '../../supabase/functions/notification-read/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOTIFICATION_KEYS = [
  'action_label',
  'content',
  'conversation_id',
  'created_at',
  'entity_id',
  'entity_type',
  'escrow_id',
  'event_type',
  'id',
  'is_read',
  'user_id',
];

const list = (user: TestUser, query: Record<string, string | number | boolean | undefined> = {}) =>
  get(notificationList, { token: user.accessToken, query });
const markRead = (user: TestUser, body: Record<string, unknown>) =>
  post(notificationRead, body, { token: user.accessToken });

/** Every notification of the user (limit 100, newest first). */
/** A notification as notification-list answers it. */
type Notification = DataOf<typeof notificationList>[number];

async function all(user: TestUser, query: Record<string, string> = {}): Promise<Notification[]> {
  return ok(await list(user, { limit: 100, ...query }));
}

/** The user's event types for one escrow, oldest first. */
async function events(user: TestUser, escrowId: string): Promise<string[]> {
  return (await all(user, { escrow_id: escrowId })).map((n) => n.event_type).reverse();
}

/** Asserts a notification has every field, belonging to user about the deal. */
function expectShape(n: Notification, user: TestUser, deal: Deal) {
  expect(Object.keys(n).sort()).toEqual(NOTIFICATION_KEYS);
  expect(n.id).toMatch(UUID);
  expect(n.user_id).toBe(user.id);
  expect(n.escrow_id).toBe(deal.escrowId);
  expect(n.conversation_id).toBe(deal.conversationId);
  expect(typeof n.event_type).toBe('string');
  expect(n.event_type.length).toBeGreaterThan(0);
  expect(typeof n.content).toBe('string');
  expect(n.content.length).toBeGreaterThan(0);
  expect(['escrow', 'transaction', 'milestone']).toContain(n.entity_type);
  expect(n.entity_id).toMatch(UUID);
  expect(typeof n.action_label).toBe('string');
  expect(n.action_label!.length).toBeGreaterThan(0);
  expect(Number.isNaN(Date.parse(n.created_at))).toBe(false);
}

/**
 * Runs a step and returns what it added to each user's notifications for the escrow (oldest first),
 * checking the shape of each new notification.
 */
async function step(
  deal: Deal,
  users: [TestUser, TestUser],
  run: () => Promise<ApiResult>,
): Promise<[Notification[], Notification[]]> {
  const before = await Promise.all(
    users.map(async (u) => new Set((await all(u, { escrow_id: deal.escrowId })).map((n) => n.id))),
  );
  const res = await run();
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  const added = await Promise.all(users.map(async (u, i) => {
    const fresh = (await all(u, { escrow_id: deal.escrowId })).filter((n) => !before[i]!.has(n.id)).reverse();
    for (const n of fresh) {
      expectShape(n, u, deal);
      expect(n.is_read).toBe(false);
    }
    return fresh;
  }));
  return [added[0]!, added[1]!];
}

const types = (ns: Notification[]) => ns.map((n) => n.event_type);

// ---- written by the transitions ------------------------------------------------------------

describe('notifications written by transitions', () => {
  it('create, fund, accept, deliver, release: each party is told what concerns them', async () => {
    // the payer tops up and funds NGN 25,000 and more: tier 1 (tier 0 moves no money)
    const initiator = await signUp({ first_name: 'Ini', tier: 1 });
    const counterparty = await signUp({ first_name: 'Cou' });
    const created = ok(
      await post(escrowCreate, {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Generator',
        counterparty_phone: counterparty.phone,
        amount: 25_000,
      }, { token: initiator.accessToken }),
      201,
    );
    const deal = {
      initiator,
      counterparty,
      payer: initiator,
      payee: counterparty,
      escrowId: created.escrow_id,
      conversationId: created.conversation_id,
    } as Deal;
    const parties: [TestUser, TestUser] = [initiator, counterparty];

    // create: the initiator
    const [ini0, cou0] = [
      await all(initiator, { escrow_id: deal.escrowId }),
      await all(counterparty, { escrow_id: deal.escrowId }),
    ];
    expect(types(ini0)).toEqual(['escrow_created']);
    expectShape(ini0[0]!, initiator, deal);
    expect(ini0[0]).toMatchObject({ entity_type: 'escrow', entity_id: deal.escrowId, is_read: false });
    expect(cou0).toEqual([]);

    await fundWallet(initiator, created.fee_breakdown.total_charge);
    const [ini1, cou1] = await step(
      deal,
      parties,
      () => escrowOp('escrow-fund', initiator, deal.escrowId, { method: 'wallet' }),
    );
    expect(types(ini1)).toEqual(['funded']);
    expect(types(cou1)).toEqual(['invite_received']);
    for (const n of [...ini1, ...cou1]) expect(n).toMatchObject({ entity_type: 'escrow', entity_id: deal.escrowId });

    const [ini2, cou2] = await step(deal, parties, () => escrowOp('escrow-accept', counterparty, deal.escrowId));
    expect(types(ini2)).toEqual(['active']);
    expect(ini2[0]!.content).toMatch(/accepted/);
    expect(cou2).toEqual([]);

    const [ini3, cou3] = await step(deal, parties, () => escrowOp('escrow-deliver', counterparty, deal.escrowId));
    expect(types(ini3)).toEqual(['delivered']);
    expect(cou3).toEqual([]);

    const [ini4, cou4] = await step(deal, parties, () => escrowOp('escrow-release', initiator, deal.escrowId));
    expect(types(ini4)).toEqual(['released']);
    expect(types(cou4)).toEqual(['released']);

    expect(await events(initiator, deal.escrowId)).toEqual([
      'escrow_created',
      'funded',
      'active',
      'delivered',
      'released',
    ]);
    expect(await events(counterparty, deal.escrowId)).toEqual(['invite_received', 'released']);
    // every one of them is in the escrow's conversation (the message feed merges them)
    const [inConversation] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.notifications where conversation_id = ${deal.conversationId}`;
    expect(inConversation!.n).toBe(7);
    // the same rows, in the same order, as the database has them
    const rows = await testDb()<{ id: string }[]>`
      select id from public.notifications where escrow_id = ${deal.escrowId} and user_id = ${initiator.id} order by created_at desc`;
    expect((await all(initiator, { escrow_id: deal.escrowId })).map((n) => n.id)).toEqual(rows.map((r) => r.id));
  });

  it('the counterparty pays: invite, acceptance (active), a payment request on the funding transaction, funding', async () => {
    // the counterparty pays from a topped-up wallet: tier 1 (tier 0 moves no money)
    const deal = await newDeal({ payerRole: 'counterparty', amount: 8_000, payerTier: 1 });
    const parties: [TestUser, TestUser] = [deal.initiator, deal.counterparty];
    expect(await events(deal.initiator, deal.escrowId)).toEqual(['escrow_created']);
    const [invite] = await all(deal.counterparty, { escrow_id: deal.escrowId });
    expectShape(invite!, deal.counterparty, deal);
    expect(invite).toMatchObject({ event_type: 'invite_received', entity_type: 'escrow', entity_id: deal.escrowId });

    const [ini, cou] = await step(deal, parties, () => escrowOp('escrow-accept', deal.counterparty, deal.escrowId));
    expect(types(ini)).toEqual(['active']);
    expect(ini[0]).toMatchObject({ entity_type: 'escrow', entity_id: deal.escrowId });
    expect(ini[0]!.content).toMatch(/accepted/);
    expect(types(cou)).toEqual(['payment_requested']);
    expect(cou[0]!.entity_type).toBe('transaction');
    expect(cou[0]!.action_label).toMatch(/fund/i);
    const [tx] = await testDb()<{ type: string; status: string; user_id: string; escrow_id: string }[]>`
      select type, status::text, user_id, escrow_id from public.transactions where id = ${cou[0]!.entity_id}`;
    expect(tx).toEqual({
      type: 'escrow_funding',
      status: 'pending',
      user_id: deal.counterparty.id,
      escrow_id: deal.escrowId,
    });

    await fundWallet(deal.counterparty, deal.feeBreakdown.total_charge);
    const [ini2, cou2] = await step(
      deal,
      parties,
      () => escrowOp('escrow-fund', deal.counterparty, deal.escrowId, { method: 'wallet' }),
    );
    expect(types(ini2)).toEqual(['funded']);
    expect(types(cou2)).toEqual(['funded']);
  });

  it('milestones: proposed, accepted, completed and released are told to the parties with the milestone as entity', async () => {
    const deal = await fundedDeal({ category: 'hiring', amount: 10_000, title: 'Mobile app' });
    const parties: [TestUser, TestUser] = [deal.payer, deal.payee];
    let milestoneId = '';
    const [p0, f0] = await step(deal, parties, async () => {
      const r = await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'Screens', amount: 4_000 }, {
        token: deal.payee.accessToken,
      });
      milestoneId = r.body.data?.id;
      return r;
    });
    expect(types(p0)).toEqual(['milestone_proposed']);
    expect(f0).toEqual([]);
    const [p1, f1] = await step(
      deal,
      parties,
      () => post(milestoneApprove, { milestone_id: milestoneId }, { token: deal.payer.accessToken }),
    );
    expect(types(p1)).toEqual(['milestone_accepted']);
    expect(types(f1)).toEqual(['milestone_accepted']);
    const [p2, f2] = await step(
      deal,
      parties,
      () => post(milestoneComplete, { milestone_id: milestoneId }, { token: deal.payee.accessToken }),
    );
    expect(types(p2)).toEqual(['milestone_completed']);
    expect(f2).toEqual([]);
    const [p3, f3] = await step(
      deal,
      parties,
      () => post(milestoneRelease, { milestone_id: milestoneId }, { token: deal.payer.accessToken }),
    );
    expect(p3).toEqual([]);
    expect(types(f3)).toEqual(['milestone_released']);
    for (const n of [...p0, ...p1, ...f1, ...p2, ...f3]) {
      expect(n).toMatchObject({ entity_type: 'milestone', entity_id: milestoneId });
    }
  });

  it('an edit of a proposed milestone tells the other party, whose approval it took back', async () => {
    const deal = await newDeal({ category: 'hiring', amount: 10_000 });
    const parties: [TestUser, TestUser] = [deal.initiator, deal.counterparty];
    const m = ok(
      await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'Logo', amount: 2_000 }, {
        token: deal.initiator.accessToken,
      }),
      201,
    );
    const [ini, cou] = await step(
      deal,
      parties,
      () => patch(milestoneUpdate, { milestone_id: m.id, amount: 2_500 }, { token: deal.counterparty.accessToken }),
    );
    expect(ini.map((n) => [n.event_type, n.entity_type, n.entity_id])).toEqual([[
      'milestone_updated',
      'milestone',
      m.id,
    ]]);
    expect(cou).toEqual([]);
  });

  it('the last milestone release releases the escrow, and both parties are told', async () => {
    const deal = await fundedDeal({ category: 'hiring', amount: 5_000, title: 'Translation' });
    const m = ok(
      await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'All of it', amount: 5_000 }, {
        token: deal.payee.accessToken,
      }),
      201,
    );
    ok(await post(milestoneApprove, { milestone_id: m.id }, { token: deal.payer.accessToken }));
    ok(await post(milestoneComplete, { milestone_id: m.id }, { token: deal.payee.accessToken }));
    const [payer, payee] = await step(
      deal,
      [deal.payer, deal.payee],
      () => post(milestoneRelease, { milestone_id: m.id }, { token: deal.payer.accessToken }),
    );
    expect(types(payer)).toEqual(['released']);
    expect(types(payee)).toEqual(['milestone_released', 'released']);
    for (const n of [...payer, payee[1]]) expect(n).toMatchObject({ entity_type: 'escrow', entity_id: deal.escrowId });
  });

  it('refund and cancel tell both parties', async () => {
    const funded = await fundedDeal({ amount: 3_000 });
    const [a, b] = await step(
      funded,
      [funded.payer, funded.payee],
      () => escrowOp('escrow-refund', funded.payee, funded.escrowId),
    );
    expect(types(a)).toEqual(['refunded']);
    expect(types(b)).toEqual(['refunded']);
    const draft = await newDeal({ payerRole: 'counterparty' });
    const [c, d] = await step(
      draft,
      [draft.initiator, draft.counterparty],
      () => escrowOp('escrow-cancel', draft.initiator, draft.escrowId),
    );
    expect(types(c)).toEqual(['cancelled']);
    expect(types(d)).toEqual(['cancelled']);
  });
});

// ---- notification-list ---------------------------------------------------------------------

describe('notification-list', () => {
  it('filters by escrow_id and by unread_only=true', async () => {
    const one = await newDeal({ payerRole: 'counterparty', title: 'First' });
    const initiator = one.initiator;
    const two = ok(
      await post(escrowCreate, {
        category: 'goods_products',
        payer_role: 'counterparty',
        title: 'Second',
        counterparty_phone: one.counterparty.phone,
        amount: 500,
      }, { token: initiator.accessToken }),
      201,
    );
    ok(await escrowOp('escrow-accept', one.counterparty, one.escrowId));

    const everything = await all(initiator);
    expect(everything.map((n) => n.escrow_id).sort()).toEqual([one.escrowId, one.escrowId, two.escrow_id].sort());
    const first = await all(initiator, { escrow_id: one.escrowId });
    expect(types(first)).toEqual(['active', 'escrow_created']);
    expect(first.every((n) => n.escrow_id === one.escrowId)).toBe(true);
    const second = await all(initiator, { escrow_id: two.escrow_id });
    expect(types(second)).toEqual(['escrow_created']);

    // unread_only
    expect(await all(initiator, { unread_only: 'true' })).toEqual(everything);
    ok(await markRead(initiator, { notification_id: first[0]!.id }));
    const unread = await all(initiator, { unread_only: 'true' });
    expect(unread.map((n) => n.id)).toEqual(everything.filter((n) => n.id !== first[0]!.id).map((n) => n.id));
    expect(unread.every((n) => n.is_read === false)).toBe(true);
    const withRead = await all(initiator, { unread_only: 'false' });
    expect(withRead.map((n) => n.id)).toEqual(everything.map((n) => n.id));
    expect(withRead.find((n) => n.id === first[0]!.id)!.is_read).toBe(true);
    expect((await all(initiator, { unread_only: 'true', escrow_id: one.escrowId })).map((n) => n.id)).toEqual([
      first[1]!.id,
    ]);
  });

  it('validates limit (1-100, default 50), unread_only (true/false), before and escrow_id', async () => {
    const deal = await newDeal();
    const u = deal.initiator;
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '', '1e2']) {
      expect(refused(await list(u, { limit }), 400), `limit=${limit}`).toEqual(['limit']);
    }
    for (const unread_only of ['yes', '1', '0', 'TRUE', 'False', '']) {
      expect(refused(await list(u, { unread_only }), 400), `unread_only=${unread_only}`).toEqual(['unread_only']);
    }
    for (const before of ['yesterday', '2026-13-01T00:00:00Z', '12345']) {
      expect(refused(await list(u, { before }), 400), `before=${before}`).toEqual(['before']);
    }
    expect(refused(await list(u, { escrow_id: 'nope' }), 400)).toEqual(['escrow_id']);
    expect(refused(await list(u, { page: '2' }), 400)).toEqual(['page']);
    refused(await get(notificationList, {}), 401);
    expect(ok(await list(u, { limit: 1 }))).toHaveLength(1);
    expect(ok(await list(u, { limit: 100 }))).toHaveLength(1);
    expect(ok(await list(u, { unread_only: 'false', before: new Date(Date.now() + 60_000).toISOString() })))
      .toHaveLength(1);
    expect(ok(await list(u, { before: '2000-01-01T00:00:00Z' }))).toEqual([]);
  });

  it('pages newest first with the before cursor: every notification exactly once, also those written in one transaction', async () => {
    const deal = await newDeal({ category: 'hiring', amount: 100_000, title: 'Big project' });
    const u = deal.initiator;
    // many transitions: each proposal by the freelancer notifies the client, each acceptance both
    const ms: DataOf<typeof milestoneCreate>[] = [];
    for (let i = 0; i < 10; i++) {
      ms.push(
        ok(
          await post(milestoneCreate, { escrow_id: deal.escrowId, title: `M${i}`, amount: 100 }, {
            token: deal.counterparty.accessToken,
          }),
          201,
        ),
      );
    }
    for (const m of ms.slice(0, 5)) {
      ok(await post(milestoneApprove, { milestone_id: m.id }, { token: u.accessToken }));
    }
    // 45 notifications written by one transaction: they share now(), and still page exactly
    await testDb()`
      select private.notify(${u.id}, ${deal.escrowId}, 'milestone_completed',
                            jsonb_build_object('kind', 'milestone_completed', 'milestone', 'Bulk ' || g, 'amount', 100),
                            'escrow', ${deal.escrowId}, 'View escrow')
        from generate_series(1, 45) g`;
    const stored = await testDb()<
      { id: string }[]
    >`select id from public.notifications where user_id = ${u.id} order by created_at desc`;
    expect(stored).toHaveLength(1 + 10 + 5 + 45);

    // default limit 50, newest first
    const first = ok(await list(u));
    expect(first).toHaveLength(50);
    expect(first.map((n) => n.id)).toEqual(stored.slice(0, 50).map((r) => r.id));

    for (const limit of [7, 10, 61, 1]) {
      const seen: Notification[] = [];
      let before: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = ok(await list(u, { limit, before }));
        seen.push(...page);
        if (page.length < limit) break;
        before = page[page.length - 1]!.created_at;
      }
      expect(seen.map((n) => n.id), `limit ${limit}`).toEqual(stored.map((r) => r.id));
      for (let i = 1; i < seen.length; i++) {
        expect(micros(seen[i - 1]!.created_at) > micros(seen[i]!.created_at)).toBe(true);
      }
    }

    // the same with the escrow filter, and only the bulk ones (the only completions) are newer than the last acceptance
    const filtered: Notification[] = [];
    let before: string | undefined;
    for (;;) {
      const page = ok(await list(u, { escrow_id: deal.escrowId, limit: 9, before }));
      filtered.push(...page);
      if (page.length < 9) break;
      before = page[page.length - 1]!.created_at;
    }
    expect(filtered.map((n) => n.id)).toEqual(stored.map((r) => r.id));
    expect(types(filtered.slice(0, 45)).every((t) => t === 'milestone_completed')).toBe(true);
  });

  it("a user never sees another user's notifications", async () => {
    const deal = await fundedDeal({ amount: 2_000 });
    const stranger = await signUp({ first_name: 'Str' });
    const mine = await all(stranger);
    expect(mine).toEqual([]);
    expect(await all(stranger, { escrow_id: deal.escrowId })).toEqual([]);
    const ini = await all(deal.initiator);
    const cou = await all(deal.counterparty);
    expect(ini.length).toBeGreaterThan(0);
    expect(cou.length).toBeGreaterThan(0);
    expect(ini.every((n) => n.user_id === deal.initiator.id)).toBe(true);
    expect(cou.every((n) => n.user_id === deal.counterparty.id)).toBe(true);
    const ids = new Set(ini.map((n) => n.id));
    expect(cou.some((n) => ids.has(n.id))).toBe(false);
    // the counterparty's view of the shared escrow holds only their own
    expect(
      (await all(deal.counterparty, { escrow_id: deal.escrowId })).every((n) => n.user_id === deal.counterparty.id),
    ).toBe(true);
  });
});

// ---- notification-read ---------------------------------------------------------------------

describe('notification-read', () => {
  it("marks one notification read; another user's id or an unknown id is 404", async () => {
    const deal = await fundedDeal({ amount: 2_000 });
    const [newest, older] = await all(deal.initiator);
    const res = ok(await markRead(deal.initiator, { notification_id: newest!.id }));
    expect(res).toEqual({ updated: 1 });
    const after = await all(deal.initiator);
    expect(after.find((n) => n.id === newest!.id)!.is_read).toBe(true);
    expect(after.find((n) => n.id === older!.id)!.is_read).toBe(false);
    // again: still read, still one
    expect(ok(await markRead(deal.initiator, { notification_id: newest!.id }))).toEqual({ updated: 1 });

    const [theirs] = await all(deal.counterparty);
    refused(await markRead(deal.initiator, { notification_id: theirs!.id }), 404, 'notification_not_found');
    const stranger = await signUp({ first_name: 'Str' });
    refused(await markRead(stranger, { notification_id: theirs!.id }), 404, 'notification_not_found');
    expect((await all(deal.counterparty)).find((n) => n.id === theirs!.id)!.is_read).toBe(false);
    refused(
      await markRead(deal.initiator, { notification_id: '00000000-0000-4000-8000-000000000000' }),
      404,
      'notification_not_found',
    );
  });

  it("with escrow_id marks every one of that escrow's notifications of the caller, and answers {updated: n}", async () => {
    const deal = await fundedDeal({ amount: 2_000 });
    const other = ok(
      await post(escrowCreate, {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Other',
        counterparty_phone: deal.counterparty.phone,
        amount: 700,
      }, { token: deal.initiator.accessToken }),
      201,
    );
    const mineBefore = await all(deal.initiator, { escrow_id: deal.escrowId });
    expect(mineBefore.length).toBeGreaterThanOrEqual(3);
    const theirsBefore = await all(deal.counterparty, { escrow_id: deal.escrowId });
    ok(await markRead(deal.initiator, { notification_id: mineBefore[0]!.id }));

    const res = ok(await markRead(deal.initiator, { escrow_id: deal.escrowId }));
    expect(res).toEqual({ updated: mineBefore.length - 1 });
    expect((await all(deal.initiator, { escrow_id: deal.escrowId })).every((n) => n.is_read)).toBe(true);
    expect(await all(deal.initiator, { escrow_id: deal.escrowId, unread_only: 'true' })).toEqual([]);
    // the other party's and the caller's other escrow's are untouched
    expect((await all(deal.counterparty, { escrow_id: deal.escrowId })).map((n) => n.is_read)).toEqual(
      theirsBefore.map(() => false),
    );
    expect((await all(deal.initiator, { escrow_id: other.escrow_id })).map((n) => n.is_read)).toEqual([false]);
    // nothing left to mark
    expect(ok(await markRead(deal.initiator, { escrow_id: deal.escrowId }))).toEqual({ updated: 0 });
  });

  it("refuses both or neither of notification_id and escrow_id (400), a stranger's escrow (404), bad ids (400)", async () => {
    const deal = await newDeal();
    const stranger = await signUp({ first_name: 'Str' });
    const [n] = await all(deal.initiator);
    refused(await markRead(deal.initiator, { notification_id: n!.id, escrow_id: deal.escrowId }), 400);
    refused(await markRead(deal.initiator, {}), 400);
    expect(refused(await markRead(deal.initiator, { notification_id: 'nope' }), 400)).toContain('notification_id');
    expect(refused(await markRead(deal.initiator, { escrow_id: 'nope' }), 400)).toContain('escrow_id');
    expect(refused(await markRead(deal.initiator, { escrow_id: deal.escrowId, all: true }), 400)).toContain('all');
    refused(await markRead(stranger, { escrow_id: deal.escrowId }), 404, 'notification_escrow_not_found');
    refused(
      await markRead(deal.initiator, { escrow_id: '00000000-0000-4000-8000-000000000000' }),
      404,
      'notification_escrow_not_found',
    );
    refused(await post(notificationRead, { escrow_id: deal.escrowId }), 401);
    expect((await all(deal.initiator)).every((x) => x.is_read === false)).toBe(true);
  });
});
