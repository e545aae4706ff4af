// Frozen accounts and the job (docs/money.md#frozen-accounts): an escrow payout created but never
// handed to the provider (a crash after the release's commit) is not sent by jobs-run while its
// payee is frozen; after the unfreeze the job sends it.
import { describe, expect, it } from 'vitest';
import { expectOk } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { testDb } from '../support/db.ts';
import { fundedDeal } from '../support/escrows.ts';
import { escrowPayoutOf, releaseWithUnsentPayout } from '../support/payouts.ts';

const inTwoMinutes = () => new Date(Date.now() + 2 * 60_000).toISOString();

describe('jobs-run', () => {
  it("leaves a frozen payee's unsent payout pending, and sends it once they are unfrozen", async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    await releaseWithUnsentPayout(deal);
    expect(await escrowPayoutOf(deal.escrowId)).toEqual({ status: 'pending', attempted: false });
    const [op] = await testDb()<{ id: string }[]>`select id from private.users where id <> ${deal.payee.id} limit 1`;
    await testDb()`select private.user_freeze(${deal.payee.id}, ${op!.id}, 'reported by the bank')`;

    expectOk(await runJobs(inTwoMinutes()));
    expect(await escrowPayoutOf(deal.escrowId)).toEqual({ status: 'pending', attempted: false });

    await testDb()`select private.user_unfreeze(${deal.payee.id}, ${op!.id}, 'the bank withdrew it')`;
    expectOk(await runJobs(inTwoMinutes()));
    expect((await escrowPayoutOf(deal.escrowId))?.attempted).toBe(true);
  });
});
