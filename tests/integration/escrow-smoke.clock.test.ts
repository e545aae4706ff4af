import { describe, expect, it } from 'vitest';
import { get } from '../support/api.ts';
import { escrowOp, escrowStatus, fundedDeal } from '../support/escrows.ts';
import { holdKobo, walletKobo } from '../support/ledger.ts';
import { runJobs } from '../support/clock.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';

describe('escrow smoke: goods_products from creation to auto-release', () => {
  it('funds, accepts, delivers, and the job releases after the inspection day', async () => {
    const deal = await fundedDeal({ amount: 10_000 });
    expect(await holdKobo(deal.escrowId)).toBe(1_008_063);
    const delivered = await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(200);
    expect(delivered.body.data.status).toBe('inspection');
    const ends = delivered.body.data.inspection_ends_at as string;
    const early = await runJobs(new Date(Date.parse(ends) - 1000).toISOString());
    expect(early.status, JSON.stringify(early.body)).toBe(200);
    expect(await escrowStatus(deal)).toBe('inspection');
    const due = await runJobs(new Date(Date.parse(ends) + 1000).toISOString());
    expect(due.body.data.released).toBeGreaterThanOrEqual(1);
    expect(await escrowStatus(deal)).toBe('released');
    expect(await holdKobo(deal.escrowId)).toBe(0);
    expect(await walletKobo(deal.payee.id)).toBe(992_500);
    const notes = await get(notificationList, {
      token: deal.payee.accessToken,
      query: { escrow_id: deal.escrowId },
    });
    expect(notes.body.data.map((n) => n.event_type)).toContain('released');
  });
});
