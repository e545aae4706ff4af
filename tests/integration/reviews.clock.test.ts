// Reviews and the job (a clock suite: it runs jobs-run, tests/README.md). An escrow the job ended
// 14 days after its release may still be reviewed by both parties, and a review keeps the time it
// ended; a review racing the job that ends the same escrow leaves it ended once.
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, get, post } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { testDb } from '../support/db.ts';
import { type Deal, escrowOp, escrowStatus, fundedDeal, fundWallet, newDeal } from '../support/escrows.ts';
import type { TestUser } from '../support/users.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import reviewSubmit from '../../supabase/functions/review-submit/handler.ts';

const review = (user: TestUser, escrowId: string, rating: number) =>
  post(reviewSubmit, { escrow_id: escrowId, rating }, { token: user.accessToken });

async function releasedDeal(): Promise<Deal> {
  const deal = await fundedDeal();
  expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
  return deal;
}

/** Closed 15 days ago, so the job ends it when run now. */
const closedLongAgo = (escrowId: string) =>
  testDb()`
    update public.escrows
       set released_at = case when released_at is not null then now() - interval '15 days' end,
           refunded_at = case when refunded_at is not null then now() - interval '15 days' end
     where id = ${escrowId}`;

const endedAt = async (escrowId: string) => {
  const [row] = await testDb()<{ ended_at: Date | null }[]>`select ended_at from public.escrows where id = ${escrowId}`;
  return row?.ended_at ?? null;
};

async function reviewLabels(user: TestUser, escrowId: string) {
  const r = expectOk(await get(notificationList, { token: user.accessToken, query: { escrow_id: escrowId } }));
  return r.filter((n) => n.event_type === 'review_received').map((n) => n.action_label);
}

describe('reviews of escrows the job ended', () => {
  it('both parties may review an escrow the job ended; its ended_at stays the job’s', async () => {
    const deal = await releasedDeal();
    await closedLongAgo(deal.escrowId);
    const now = new Date().toISOString();
    expectOk(await runJobs(now));
    expect(await escrowStatus(deal)).toBe('ended');
    const ended = await endedAt(deal.escrowId);
    expect(ended?.toISOString()).toBe(now);

    expectOk(await review(deal.payee, deal.escrowId, 5), 201);
    expect(await reviewLabels(deal.payer, deal.escrowId)).toEqual(['Leave a review']);
    expectOk(await review(deal.payer, deal.escrowId, 4), 201);
    expect(await reviewLabels(deal.payee, deal.escrowId)).toEqual([null]);
    expect(await escrowStatus(deal)).toBe('ended');
    expect((await endedAt(deal.escrowId))?.toISOString()).toBe(now);
    // and still once each
    expectError(await review(deal.payer, deal.escrowId, 1), 409);
  });

  it('an escrow refunded because the counterparty declined, then ended by the job, is still not reviewable', async () => {
    const deal = await newDeal({ payerTier: 1 });
    await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
    expectOk(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId));
    await closedLongAgo(deal.escrowId);
    expectOk(await runJobs(new Date().toISOString()));
    expect(await escrowStatus(deal)).toBe('ended');
    expectError(await review(deal.initiator, deal.escrowId, 1), 409);
    expectError(await review(deal.counterparty, deal.escrowId, 1), 409);
  });

  it('the second review and the job ending the same escrow at once: ended, with both reviews', async () => {
    for (let i = 0; i < 3; i++) {
      const deal = await releasedDeal();
      expectOk(await review(deal.payer, deal.escrowId, 3), 201);
      await closedLongAgo(deal.escrowId);
      const [job, second] = await Promise.all([
        runJobs(new Date().toISOString()),
        review(deal.payee, deal.escrowId, 4),
      ]);
      expect(job.status).toBe(200);
      expect(second.status, JSON.stringify(second.body)).toBe(201);
      expect(await escrowStatus(deal)).toBe('ended');
      expect(await endedAt(deal.escrowId)).not.toBeNull();
      const [n] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from public.reviews where escrow_id = ${deal.escrowId}`;
      expect(n?.n).toBe(2);
    }
  });
});
