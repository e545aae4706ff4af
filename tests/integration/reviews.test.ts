// Reviews and the public profile (docs/reviews.md) through the real server: who may
// review (the two parties of a deal that took place, once each, after it closed), the bounds of a
// review, the escrow ending when both have reviewed (also under concurrency), review-list's paging
// with many reviews sharing a created_at, what profile-public-get reveals and what it never does,
// and which deals and reviews its figures count (REVIEW_MIN_AMOUNT, one review per reviewer in 30 days).
import { describe, expect, it } from 'vitest';
import { type BodyOf, call, type DataOf, expectError, expectOk, get, patch, post } from '../support/api.ts';
import { asUserSql, testDb } from '../support/db.ts';
import { type Deal, escrowOp, escrowStatus, fundedDeal, fundWallet, newDeal } from '../support/escrows.ts';
import { signUp, type TestUser } from '../support/users.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import profilePublicGet from '../../supabase/functions/profile-public-get/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';
import reviewList from '../../supabase/functions/review-list/handler.ts';
import reviewSubmit from '../../supabase/functions/review-submit/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const review = (user: TestUser, body: BodyOf<typeof reviewSubmit>, headers: Record<string, string> = {}) =>
  post(reviewSubmit, body, { token: user.accessToken, headers });

/** A goods deal funded by the payer's wallet, accepted and released by the payer. */
async function releasedDeal(opts: Parameters<typeof fundedDeal>[0] = {}): Promise<Deal> {
  const deal = await fundedDeal(opts);
  expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
  return deal;
}

/** A released deal between two given users (payer initiates), for several deals per user. */
async function releasedBetween(payer: TestUser, payee: TestUser, amount = 5_000, topUp = true): Promise<string> {
  const created = expectOk(
    await post(
      escrowCreate,
      {
        category: 'p2p_crypto',
        payer_role: 'initiator',
        title: 'USDT for naira',
        counterparty_phone: payee.phone,
        amount,
      },
      { token: payer.accessToken },
    ),
    201,
  );
  const id = created.escrow_id as string;
  if (topUp) await fundWallet(payer, created.fee_breakdown.total_charge);
  expectOk(await escrowOp('escrow-fund', payer, id, { method: 'wallet' }));
  expectOk(await escrowOp('escrow-accept', payee, id));
  expectOk(await escrowOp('escrow-release', payer, id));
  return id;
}

const escrowRow = async (id: string) => {
  const [row] = await testDb()<{ status: string; ended_at: Date | null; updated_at: Date }[]>`
    select status, ended_at, updated_at from public.escrows where id = ${id}`;
  return row as { status: string; ended_at: Date | null; updated_at: Date };
};

const reviewsOf = (escrowId: string) =>
  testDb()<{ id: string; reviewer_id: string; reviewee_id: string; rating: number; feedback: string | null }[]>`
    select id, reviewer_id, reviewee_id, rating, feedback from public.reviews where escrow_id = ${escrowId}`;

async function reviewNotes(user: TestUser, escrowId: string) {
  const r = expectOk(await get(notificationList, { token: user.accessToken, query: { escrow_id: escrowId } }));
  return r.filter((n) => n.event_type === 'review_received');
}

// ---- submitting ----------------------------------------------------------------------------

describe('review-submit', () => {
  it('a party reviews the other after a release: 201 with the Review; the reviewee is told and offered to review back', async () => {
    const deal = await releasedDeal({ title: 'Used laptop' });
    const r = expectOk(
      await review(deal.payer, { escrow_id: deal.escrowId, rating: 5, feedback: '  Smooth deal.  ' }),
      201,
    );
    expect(r).toMatchObject({
      escrow_id: deal.escrowId,
      reviewer_id: deal.payer.id,
      reviewee_id: deal.payee.id,
      rating: 5,
      feedback: 'Smooth deal.',
      reviewer_first_name: 'Ini',
      reviewer_last_name: 'Obi',
      reviewer_avatar_url: null,
      escrow_title: 'Used laptop',
    });
    // one review: the escrow stays released until the other party reviews (or the 14 days pass)
    expect(await escrowStatus(deal)).toBe('released');
    const [note] = await reviewNotes(deal.payee, deal.escrowId);
    expect(note).toMatchObject({
      user_id: deal.payee.id,
      entity_type: 'review',
      entity_id: r.id,
      action_label: 'Leave a review',
      content: 'Ini Obi rated you 5 out of 5 for "Used laptop".',
    });
    expect(await reviewNotes(deal.payer, deal.escrowId)).toEqual([]);
  });

  it('the second party reviewing ends the escrow at once (escrow-get shows ended); no action is offered then', async () => {
    const deal = await releasedDeal();
    const first = expectOk(await review(deal.payee, { escrow_id: deal.escrowId, rating: 4 }), 201);
    expect(first.feedback).toBeNull();
    const before = await escrowRow(deal.escrowId);
    expect(before.ended_at).toBeNull();
    expectOk(await review(deal.payer, { escrow_id: deal.escrowId, rating: 3, feedback: null }), 201);
    expect(await escrowStatus(deal)).toBe('ended');
    const after = await escrowRow(deal.escrowId);
    expect(after.ended_at).not.toBeNull();
    expect(after.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    const [note] = await reviewNotes(deal.payee, deal.escrowId);
    expect(note!.action_label).toBeNull();
    // the counterparty sees it ended too
    const seen = expectOk(
      await get(escrowGet, { token: deal.counterparty.accessToken, query: { escrow_id: deal.escrowId } }),
    );
    expect(seen.status).toBe('ended');
  });

  it('a refunded deal may be reviewed by both, and ends the same way', async () => {
    const deal = await fundedDeal({ category: 'hiring' });
    expectOk(await escrowOp('escrow-refund', deal.payee, deal.escrowId));
    expectOk(await review(deal.payer, { escrow_id: deal.escrowId, rating: 2 }), 201);
    expect(await escrowStatus(deal)).toBe('refunded');
    expectOk(await review(deal.payee, { escrow_id: deal.escrowId, rating: 4 }), 201);
    expect(await escrowStatus(deal)).toBe('ended');
  });

  it('a deal the counterparty never accepted (declined after funding, so refunded) has nobody to review: 409', async () => {
    const deal = await newDeal({ payerTier: 1 });
    await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
    expectOk(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId));
    expect(await escrowStatus(deal)).toBe('refunded');
    for (const user of [deal.initiator, deal.counterparty]) {
      const r = await review(user, { escrow_id: deal.escrowId, rating: 1 });
      expectError(r, 409);
      expect(r.body.error).toMatch(/never accepted/);
    }
    expect(await reviewsOf(deal.escrowId)).toEqual([]);
  });

  it('a second review by the same reviewer is 409 and changes nothing', async () => {
    const deal = await releasedDeal();
    expectOk(await review(deal.payer, { escrow_id: deal.escrowId, rating: 5 }), 201);
    const again = await review(deal.payer, { escrow_id: deal.escrowId, rating: 1, feedback: 'changed my mind' });
    expectError(again, 409);
    expect(again.body.error).toBe('you have already reviewed this escrow');
    const rows = await reviewsOf(deal.escrowId);
    expect(rows.map((x) => x.rating)).toEqual([5]);
    expect(await escrowStatus(deal)).toBe('released');
  });

  it('a stranger, a user who deals with both parties elsewhere, and an unknown escrow: 404', async () => {
    const [deal, stranger] = await Promise.all([releasedDeal(), signUp({ first_name: 'Str' })]);
    // someone who knows the payer from another deal is still not a party of this one
    const acquaintance = await signUp({ first_name: 'Acq' });
    await releasedBetween(deal.payer, acquaintance);
    for (const user of [stranger, acquaintance]) {
      const r = await review(user, { escrow_id: deal.escrowId, rating: 1 });
      expectError(r, 404);
      expect(r.body.error).toBe('escrow not found');
    }
    expectError(await review(stranger, { escrow_id: crypto.randomUUID(), rating: 3 }), 404);
    expect(await reviewsOf(deal.escrowId)).toEqual([]);
  });

  it('refuses an escrow that is not over yet: draft, invite_pending, funded-unaccepted, funded, inspection, cancelled: 409', async () => {
    const draft = await newDeal();
    const invited = await newDeal({ payerRole: 'counterparty' });
    const unaccepted = await newDeal({ payerTier: 1 });
    await fundWallet(unaccepted.payer, unaccepted.feeBreakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', unaccepted.payer, unaccepted.escrowId, { method: 'wallet' }));
    const funded = await fundedDeal({ category: 'auto_dealership' });
    const inspected = await fundedDeal();
    expectOk(await escrowOp('escrow-deliver', inspected.payee, inspected.escrowId));
    const cancelled = await newDeal();
    expectOk(await escrowOp('escrow-cancel', cancelled.initiator, cancelled.escrowId));
    const cases: [Deal, string][] = [
      [draft, 'draft'],
      [invited, 'invite_pending'],
      [unaccepted, 'active'],
      [funded, 'funded'],
      [inspected, 'inspection'],
      [cancelled, 'cancelled'],
    ];
    for (const [deal, status] of cases) {
      expect(await escrowStatus(deal)).toBe(status);
      const r = await review(deal.initiator, { escrow_id: deal.escrowId, rating: 4 });
      expectError(r, 409);
      expect(r.body.error, status).toMatch(new RegExp(`^cannot review an escrow that is ${status}`));
      expect(await reviewsOf(deal.escrowId)).toEqual([]);
    }
    // the counterparty of the funded one too
    expectError(await review(funded.counterparty, { escrow_id: funded.escrowId, rating: 4 }), 409);
  });

  it('a deleted escrow is gone: 404', async () => {
    const deal = await newDeal();
    expectOk(await escrowOp('escrow-delete', deal.initiator, deal.escrowId));
    const r = await review(deal.initiator, { escrow_id: deal.escrowId, rating: 5 });
    expectError(r, 404);
    expectError(await review(deal.counterparty, { escrow_id: deal.escrowId, rating: 5 }), 404);
  });

  it('validates the body: rating an integer 1-5, feedback at most 2000 characters, no control characters, no unknown field', async () => {
    const deal = await releasedDeal();
    const id = deal.escrowId;
    for (const rating of [0, 6, 2.5, '5', -1, null, true]) {
      // @ts-expect-error ratings the schema refuses, on purpose
      const r = await review(deal.payer, { escrow_id: id, rating });
      expect(expectError(r, 400), JSON.stringify(rating)).toEqual(['rating']);
    }
    // @ts-expect-error a body without its rating, on purpose
    expect(expectError(await review(deal.payer, { escrow_id: id }), 400)).toEqual(['rating']);
    const long = await review(deal.payer, { escrow_id: id, rating: 3, feedback: 'x'.repeat(2001) });
    expect(expectError(long, 400)).toEqual(['feedback']);
    expect(long.body.details[0]!.message).toBe('must be at most 2000 characters');
    expect(expectError(await review(deal.payer, { escrow_id: id, rating: 3, feedback: 'bad\u0000byte' }), 400))
      .toEqual(['feedback']);
    // @ts-expect-error a number for the feedback, on purpose
    expect(expectError(await review(deal.payer, { escrow_id: id, rating: 3, feedback: 12 }), 400)).toEqual([
      'feedback',
    ]);
    expect(expectError(await review(deal.payer, { escrow_id: 'nope', rating: 3 }), 400)).toEqual(['escrow_id']);
    // @ts-expect-error a field a client may not set, on purpose
    expect(expectError(await review(deal.payer, { escrow_id: id, rating: 3, reviewee_id: deal.payer.id }), 400))
      .toEqual(['reviewee_id']);
    expectError(await call(reviewSubmit, { method: 'POST', body: { escrow_id: id, rating: 3 } }), 401);
    expect(await reviewsOf(id)).toEqual([]);
    // the bounds themselves are accepted: 2000 characters after trimming, a blank one is no feedback
    const max = expectOk(
      await review(deal.payer, { escrow_id: id, rating: 1, feedback: ` ${'é'.repeat(2000)}\n` }),
      201,
    );
    expect(max.feedback).toBe('é'.repeat(2000));
    const blank = expectOk(await review(deal.payee, { escrow_id: id, rating: 5, feedback: ' \t\n ' }), 201);
    expect(blank.feedback).toBeNull();
  });

  it('Idempotency-Key: the same key and body replays the 201; another body with it is 409', async () => {
    const deal = await releasedDeal();
    const key = `review-${crypto.randomUUID()}`;
    const body = { escrow_id: deal.escrowId, rating: 4, feedback: 'ok' };
    const first = await review(deal.payer, body, { 'Idempotency-Key': key });
    const again = await review(deal.payer, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expectError(await review(deal.payer, { ...body, rating: 5 }, { 'Idempotency-Key': key }), 409);
    expect(await reviewsOf(deal.escrowId)).toHaveLength(1);
  });

  // ---- concurrency ---------------------------------------------------------------------------

  describe('under concurrency', () => {
    it('both parties at the same moment: two reviews, the escrow ended exactly once', async () => {
      const deals = await Promise.all([releasedDeal(), releasedDeal(), releasedDeal()]);
      for (const deal of deals) {
        const [a, b] = await Promise.all([
          review(deal.payer, { escrow_id: deal.escrowId, rating: 5 }),
          review(deal.payee, { escrow_id: deal.escrowId, rating: 4 }),
        ]);
        expect([a.status, b.status]).toEqual([201, 201]);
        expect(await escrowStatus(deal)).toBe('ended');
        expect((await escrowRow(deal.escrowId)).ended_at).not.toBeNull();
        expect(await reviewsOf(deal.escrowId)).toHaveLength(2);
        // serialised by the escrow lock: the first saw no review of the other (and offered one),
        // the second saw the first (and ended the escrow)
        const labels = [
          ...(await reviewNotes(deal.payer, deal.escrowId)),
          ...(await reviewNotes(deal.payee, deal.escrowId)),
        ].map((n) => n.action_label);
        expect(labels.sort()).toEqual(['Leave a review', null]);
      }
    });

    it('20 identical submissions in parallel: one review, nineteen 409', async () => {
      const deal = await releasedDeal();
      const body = { escrow_id: deal.escrowId, rating: 3 };
      const answers = await Promise.all(Array.from({ length: 20 }, () => review(deal.payee, body)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([201, ...Array(19).fill(409)]);
      expect(await reviewsOf(deal.escrowId)).toHaveLength(1);
      expect(await reviewNotes(deal.payer, deal.escrowId)).toHaveLength(1);
    });

    it('20 parallel submissions with one Idempotency-Key: one review; the others replay it or are told it is running', async () => {
      const deal = await releasedDeal();
      const body = { escrow_id: deal.escrowId, rating: 2 };
      const key = `race-${crypto.randomUUID()}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => review(deal.payee, body, { 'Idempotency-Key': key })),
      );
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.data.id)).size).toBe(1);
      expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
      expect(await reviewsOf(deal.escrowId)).toHaveLength(1);
    });
  });
});

// ---- listing -------------------------------------------------------------------------------

describe('review-list', () => {
  it("lists a user's reviews newest first; the caller's own by default; full last names only to the review's parties", async () => {
    const deal = await releasedDeal();
    const outsider = await signUp({ first_name: 'Out', last_name: 'Sider' });
    const written = expectOk(await review(deal.payer, { escrow_id: deal.escrowId, rating: 4, feedback: 'Good' }), 201);
    // the reviewee, by default their own
    const mine = expectOk(await get(reviewList, { token: deal.payee.accessToken }));
    expect(mine).toEqual([written]);
    // anyone signed in, by user_id: the reviewer's last name as its initial
    const theirs = expectOk(
      await get(reviewList, { token: outsider.accessToken, query: { user_id: deal.payee.id } }),
    );
    expect(theirs).toEqual([{ ...written, reviewer_last_name: 'O' }]);
    // the payer has no reviews yet
    expect(expectOk(await get(reviewList, { token: outsider.accessToken, query: { user_id: deal.payer.id } })))
      .toEqual([]);
  });

  it('an unknown user is 404; bad parameters are 400 naming them; no token is 401', async () => {
    const user = await signUp();
    expectError(await get(reviewList, { token: user.accessToken, query: { user_id: crypto.randomUUID() } }), 404);
    for (
      const [query, field] of [
        [{ limit: 0 }, 'limit'],
        [{ limit: 51 }, 'limit'],
        [{ limit: 'x' }, 'limit'],
        [{ before: 'yesterday' }, 'before'],
        [{ user_id: 'nope' }, 'user_id'],
        [{ sort: 'asc' }, 'sort'],
      ] as const
    ) {
      // @ts-expect-error the table holds a query parameter review-list does not take, on purpose
      expect(expectError(await get(reviewList, { token: user.accessToken, query }), 400)).toEqual([field]);
    }
    expectError(await get(reviewList, {}), 401);
  });

  it('pages newest first with `before` and loses or repeats nothing when many reviews were written in one transaction', async () => {
    const target = await signUp({ first_name: 'Tar', last_name: 'Get' });
    const reviewers = await Promise.all([1, 2, 3].map((i) => signUp({ first_name: `Rev${i}` })));
    // drafts with the target as counterparty: five per reviewer, each reviewed once below
    const escrows: { escrow: string; reviewer: TestUser }[] = [];
    for (const reviewer of reviewers) {
      for (let i = 0; i < 5; i++) {
        const created = expectOk(
          await post(
            escrowCreate,
            {
              category: 'goods_products',
              payer_role: 'initiator',
              title: `Item ${i}`,
              counterparty_phone: target.phone,
              amount: 1_000,
            },
            { token: reviewer.accessToken },
          ),
          201,
        );
        escrows.push({ escrow: created.escrow_id, reviewer });
      }
    }
    // fifteen reviews in one transaction: one now(), so the same created_at asked for every row
    const inserted = await testDb().begin(async (tx) => {
      const ids: string[] = [];
      for (const [i, e] of escrows.entries()) {
        const [row] = await tx<{ id: string }[]>`
          insert into public.reviews (escrow_id, reviewer_id, reviewee_id, rating, feedback)
          values (${e.escrow}, ${e.reviewer.id}, ${target.id}, ${1 + (i % 5)}, ${`review ${i}`}) returning id`;
        ids.push((row as { id: string }).id);
      }
      return ids;
    });
    // the trigger made them distinct (one microsecond apart), so the cursor is exact
    const [ts] = await testDb()<{ rows: number; distinct: number }[]>`
      select count(*)::int as rows, count(distinct created_at)::int as distinct
        from public.reviews where reviewee_id = ${target.id}`;
    expect(ts).toEqual({ rows: 15, distinct: 15 });

    const seen: DataOf<typeof reviewList> = [];
    let before: string | undefined;
    for (let page = 0; page < 10; page++) {
      const items = expectOk(
        await get(reviewList, { token: target.accessToken, query: { limit: 4, ...(before ? { before } : {}) } }),
      );
      seen.push(...items);
      if (items.length < 4) break;
      before = items[items.length - 1]!.created_at;
    }
    expect(seen).toHaveLength(15);
    expect(new Set(seen.map((r) => r.id))).toEqual(new Set(inserted));
    // newest first: the reverse of the insertion order
    expect(seen.map((r) => r.id)).toEqual([...inserted].reverse());
    // strictly decreasing, to the microsecond
    const micros = (t: string) => {
      const [whole, frac = ''] = t.replace(/Z$/, '').split('.');
      return BigInt(Date.parse(`${whole}Z`)) * 1000n + BigInt(frac.padEnd(6, '0'));
    };
    const times = seen.map((r) => micros(r.created_at));
    expect(times.every((t, i) => i === 0 || t < (times[i - 1] as bigint))).toBe(true);
    // the default limit is 20, the largest 50
    expect(expectOk(await get(reviewList, { token: target.accessToken }))).toHaveLength(15);
    expect(expectOk(await get(reviewList, { token: target.accessToken, query: { limit: 50 } }))).toHaveLength(15);
  });
});

// ---- the public profile --------------------------------------------------------------------

describe('profile-public-get', () => {
  const FIELDS = [
    'avatar_url',
    'completed_deals',
    'first_name',
    'id',
    'kyc_tier',
    'last_initial',
    'member_since',
    'rating_average',
    'rating_count',
    'username',
  ];

  it('a new user: name with the initial, no rating, no deals, tier 0, member since their sign-up date', async () => {
    const [user, viewer] = await Promise.all([
      signUp({ first_name: 'Chioma', last_name: 'eze' }),
      signUp({ first_name: 'View' }),
    ]);
    const p = expectOk(await get(profilePublicGet, { token: viewer.accessToken, query: { user_id: user.id } }));
    expect(Object.keys(p).sort()).toEqual(FIELDS);
    expect(p).toEqual({
      id: user.id,
      first_name: 'Chioma',
      last_initial: 'E',
      username: null,
      avatar_url: null,
      kyc_tier: 0,
      member_since: new Date().toISOString().slice(0, 10),
      completed_deals: 0,
      rating_average: null,
      rating_count: 0,
    });
  });

  it('never shows the phone, address, bio, next of kin, last name or balances, even when they are set', async () => {
    // the user at tier 1, which lets them top up the balance that must not show (tier 0 moves no money)
    const [user, viewer] = await Promise.all([signUp({ last_name: 'Okonkwo', tier: 1 }), signUp()]);
    expectOk(
      await patch(
        profileUpdate,
        {
          username: `pub_${user.id.slice(0, 8)}`,
          address: '12 Secret Close, Ikoyi',
          bio: 'Private bio text',
          avatar_url: 'https://cdn.example/a.png',
        },
        { token: user.accessToken },
      ),
    );
    expectOk(
      await patch(
        profileNokUpdate,
        {
          first_name: 'Kin',
          last_name: 'Hidden',
          phone: '08011112222',
          address: '3 Kin Road',
          relationship: 'Sibling',
        },
        { token: user.accessToken },
      ),
    );
    await fundWallet(user, 7_777);
    const r = await get(profilePublicGet, { token: viewer.accessToken, query: { user_id: user.id } });
    const p = expectOk(r);
    expect(Object.keys(p).sort()).toEqual(FIELDS);
    expect(p).toMatchObject({
      username: `pub_${user.id.slice(0, 8)}`,
      avatar_url: 'https://cdn.example/a.png',
      last_initial: 'O',
    });
    const text = JSON.stringify(r.body);
    for (
      const secret of [user.phone, user.phone.slice(4), 'Secret Close', 'Private bio', 'Hidden', 'Okonkwo', '7777']
    ) {
      expect(text).not.toContain(secret);
    }
  });

  it('counts completed deals (released, also once ended) and averages ratings to 2 decimals', async () => {
    // each of the four pays for a deal below from a topped-up wallet: tier 1 (tier 0 moves no money)
    const [user, a, b, c] = await Promise.all([
      signUp({ first_name: 'Pro', tier: 1 }),
      signUp({ first_name: 'A', tier: 1 }),
      signUp({ first_name: 'B', tier: 1 }),
      signUp({ first_name: 'C', tier: 1 }),
    ]);
    // three released deals, the user paid in one and was paid in two
    const e1 = await releasedBetween(user, a);
    const e2 = await releasedBetween(b, user);
    const e3 = await releasedBetween(c, user);
    // a refunded one does not count
    const refunded = expectOk(
      await post(
        escrowCreate,
        {
          category: 'hiring',
          payer_role: 'initiator',
          title: 'Refunded job',
          counterparty_phone: user.phone,
          amount: 500,
        },
        { token: a.accessToken },
      ),
      201,
    );
    await fundWallet(a, refunded.fee_breakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', a, refunded.escrow_id, { method: 'wallet' }));
    expectOk(await escrowOp('escrow-accept', user, refunded.escrow_id));
    expectOk(await escrowOp('escrow-refund', user, refunded.escrow_id));
    // ratings 5, 4, 4 of the user: 4.33; e1 ended by both reviews still counts as completed
    expectOk(await review(a, { escrow_id: e1, rating: 5 }), 201);
    expectOk(await review(user, { escrow_id: e1, rating: 2 }), 201);
    expectOk(await review(b, { escrow_id: e2, rating: 4 }), 201);
    expectOk(await review(c, { escrow_id: e3, rating: 4 }), 201);
    expect((await escrowRow(e1)).status).toBe('ended');
    const p = expectOk(await get(profilePublicGet, { token: a.accessToken, query: { user_id: user.id } }));
    expect(p).toMatchObject({ completed_deals: 3, rating_average: 4.33, rating_count: 3 });
    const pa = expectOk(await get(profilePublicGet, { token: user.accessToken, query: { user_id: a.id } }));
    expect(pa).toMatchObject({ completed_deals: 1, rating_average: 2, rating_count: 1 });
  });

  describe('which deals and reviews count (REVIEW_MIN_AMOUNT, NGN 1,000 by default)', () => {
    const profileOf = async (viewer: TestUser, u: TestUser) =>
      expectOk(await get(profilePublicGet, { token: viewer.accessToken, query: { user_id: u.id } }));

    it('a refunded NGN 1,000 escrow costs nothing, so its 5-star review does not count', async () => {
      const star = await signUp({ tier: 1, first_name: 'Star' });
      await fundWallet(star, 1_200);
      for (let i = 0; i < 3; i++) {
        const sock = await signUp();
        const created = expectOk(
          await post(escrowCreate, {
            category: 'goods_products',
            payer_role: 'initiator',
            title: 'Refunded deal',
            counterparty_phone: sock.phone,
            amount: 1000,
          }, { token: star.accessToken }),
          201,
        );
        expectOk(await escrowOp('escrow-fund', star, created.escrow_id, { method: 'wallet' }));
        expectOk(await escrowOp('escrow-accept', sock, created.escrow_id));
        expectOk(await escrowOp('escrow-refund', sock, created.escrow_id));
        expectOk(await review(sock, { escrow_id: created.escrow_id, rating: 5 }), 201);
      }
      expect(await profileOf(await signUp(), star)).toMatchObject({ rating_average: null, rating_count: 0 });
    });

    it('ten deals of NGN 0.01 with a friend, each reviewed 5 stars: no completed deal, no rating; still listed', async () => {
      const [user, friend] = await Promise.all([signUp({ first_name: 'Wash' }), signUp({ tier: 1 })]);
      await fundWallet(friend, 100); // pays all ten (NGN 0.01 and its fee each)
      for (let i = 0; i < 10; i++) {
        const id = await releasedBetween(friend, user, 0.01, false);
        expectOk(await review(friend, { escrow_id: id, rating: 5 }), 201);
      }
      expect(await profileOf(friend, user)).toMatchObject({
        completed_deals: 0,
        rating_average: null,
        rating_count: 0,
      });
      // the reviews exist and are listed as before
      const listed = expectOk(await get(reviewList, { token: friend.accessToken, query: { user_id: user.id } }));
      expect(listed).toHaveLength(10);
    });

    it('a deal of NGN 1,000 or more counts; the same reviewer counts once in 30 days, again after', async () => {
      const [user, friend] = await Promise.all([signUp({ first_name: 'Real' }), signUp({ tier: 1 })]);
      const first = await releasedBetween(friend, user, 1_000);
      const r1 = expectOk(await review(friend, { escrow_id: first, rating: 4 }), 201);
      expect(await profileOf(friend, user)).toMatchObject({ completed_deals: 1, rating_average: 4, rating_count: 1 });
      // a second deal with the same friend a day later: the deal's counterparty is the same, and the
      // review is the friend's second of this user within 30 days
      const second = await releasedBetween(friend, user, 5_000);
      expectOk(await review(friend, { escrow_id: second, rating: 1 }), 201);
      expect(await profileOf(friend, user)).toMatchObject({ completed_deals: 1, rating_average: 4, rating_count: 1 });
      // 31 days after the first review, the next one counts
      await testDb()`update public.reviews set created_at = created_at - interval '31 days' where id = ${r1.id}`;
      expect(await profileOf(friend, user)).toMatchObject({
        completed_deals: 1,
        rating_average: 2.5,
        rating_count: 2,
      });
      // a below-the-line review in between neither counts nor resets the 30 days
      expectOk(await review(friend, { escrow_id: await releasedBetween(friend, user, 999.99), rating: 5 }), 201);
      expect(await profileOf(friend, user)).toMatchObject({ rating_average: 2.5, rating_count: 2 });
    });

    it('completed_deals counts distinct counterparties of released deals of at least the amount', async () => {
      const [user, a, b] = await Promise.all([signUp(), signUp({ tier: 1 }), signUp({ tier: 1 })]);
      await releasedBetween(a, user, 1_000);
      await releasedBetween(a, user, 2_000);
      await releasedBetween(b, user, 3_000);
      await releasedBetween(b, user, 999.99); // below the line: b counts once anyway
      expect((await profileOf(a, user)).completed_deals).toBe(2);
      expect((await profileOf(user, a)).completed_deals).toBe(1);
    });
  });

  it('an unknown user is 404, a malformed id 400, no token 401', async () => {
    const viewer = await signUp();
    const r = await get(profilePublicGet, { token: viewer.accessToken, query: { user_id: crypto.randomUUID() } });
    expectError(r, 404);
    expect(r.body.error).toBe('User not found');
    expect(expectError(await get(profilePublicGet, { token: viewer.accessToken, query: { user_id: 'x' } }), 400))
      .toEqual(['user_id']);
    expect(expectError(await get(profilePublicGet, { token: viewer.accessToken }), 400)).toEqual(['user_id']);
    expectError(await get(profilePublicGet, { query: { user_id: viewer.id } }), 401);
  });
});

// ---- row-level security --------------------------------------------------------------------

describe('reviews under row-level security', () => {
  it('the reviewer and the reviewee read the row directly; a third user does not; nobody writes it', async () => {
    const [deal, other] = await Promise.all([releasedDeal(), signUp()]);
    const r = expectOk(await review(deal.payer, { escrow_id: deal.escrowId, rating: 5 }), 201);
    const sees = (id: string) => asUserSql(id, (tx) => tx`select id from public.reviews where id = ${r.id}`);
    expect(await sees(deal.payer.id)).toHaveLength(1);
    expect(await sees(deal.payee.id)).toHaveLength(1);
    expect(await sees(other.id)).toHaveLength(0);
    for (const user of [deal.payer, deal.payee]) {
      await expect(asUserSql(user.id, (tx) => tx`update public.reviews set rating = 1 where id = ${r.id}`)).rejects
        .toMatchObject({ code: '42501' });
      await expect(asUserSql(user.id, (tx) => tx`delete from public.reviews where id = ${r.id}`)).rejects
        .toMatchObject({ code: '42501' });
    }
    await expect(
      asUserSql(deal.payee.id, (tx) => tx`select private.review_submit(${deal.escrowId}, ${deal.payee.id}, 5, null)`),
    )
      .rejects.toMatchObject({ code: '42501' });
  });
});
