// Frozen accounts and the job (docs/money.md#frozen-accounts): an escrow payout created but never
// handed to the provider (a crash after the release's commit) is not sent by jobs-run while its
// payee is frozen; after the unfreeze the job sends it.
import { describe, expect, it } from 'vitest';
import { expectOk } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { testDb } from '../support/db.ts';
import { escrowOp, fundedDeal } from '../support/escrows.ts';
import { raiseTier } from '../support/kyc.ts';
import { addPayout } from '../support/payouts.ts';

const inTwoMinutes = () => new Date(Date.now() + 2 * 60_000).toISOString();

async function payoutOf(escrowId: string) {
  const [row] = await testDb()<{ status: string; attempted: boolean }[]>`
    select status, metadata ? 'transfer_attempted_at' as attempted
      from public.transactions where escrow_id = ${escrowId} and type = 'escrow_payout'`;
  return row;
}

describe('jobs-run', () => {
  it("leaves a frozen payee's unsent payout pending, and sends it once they are unfrozen", async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    expect(await raiseTier(deal.payee.id, 3)).toBe(3);
    // released while the payee has no payout account: the money stays in their wallet
    expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    await addPayout(deal.payee);
    // a payout committed but never sent, as a crash between the commit and the provider call leaves it
    await testDb().begin(async (tx) => {
      await tx`select private.kyc_lock(${deal.payee.id})`;
      await tx`select private.escrow_start_payout(e, ${deal.feeBreakdown.seller_payout * 100})
                 from public.escrows e where e.id = ${deal.escrowId}`;
    });
    expect(await payoutOf(deal.escrowId)).toEqual({ status: 'pending', attempted: false });
    const [op] = await testDb()<{ id: string }[]>`select id from private.users where id <> ${deal.payee.id} limit 1`;
    await testDb()`select private.user_freeze(${deal.payee.id}, ${op!.id}, 'reported by the bank')`;

    expectOk(await runJobs(inTwoMinutes()));
    expect(await payoutOf(deal.escrowId)).toEqual({ status: 'pending', attempted: false });

    await testDb()`select private.user_unfreeze(${deal.payee.id}, ${op!.id}, 'the bank withdrew it')`;
    expectOk(await runJobs(inTwoMinutes()));
    expect((await payoutOf(deal.escrowId))?.attempted).toBe(true);
  });
});
