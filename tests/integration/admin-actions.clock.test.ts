// An unfreeze through the operator endpoints and the job (docs/operators.md#freezing-and-unfreezing):
// a payout committed before the freeze but never handed to the provider stays unsent while the
// payee is frozen (admin-user-freeze), also while the unfreeze waits for a second operator
// (admin-user-unfreeze answers 202), and goes out at the job's next run once the second finance
// operator approves it.
import { describe, expect, it } from 'vitest';
import { expectOk as ok, post } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { testDb } from '../support/db.ts';
import { fundedDeal } from '../support/escrows.ts';
import { newOperator } from '../support/operators.ts';
import { escrowPayoutOf, releaseWithUnsentPayout } from '../support/payouts.ts';
import adminApprovalDecide from '../../supabase/functions/admin-approval-decide/handler.ts';
import adminUserFreeze from '../../supabase/functions/admin-user-freeze/handler.ts';
import adminUserUnfreeze from '../../supabase/functions/admin-user-unfreeze/handler.ts';

const inTwoMinutes = () => new Date(Date.now() + 2 * 60_000).toISOString();

describe('admin-user-unfreeze', () => {
  it('the payout held by the freeze goes out at the next job run after the second operator approves', async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    await releaseWithUnsentPayout(deal);
    const finance = await newOperator(['finance']);
    ok(
      await post(adminUserFreeze, { user_id: deal.payee.id, reason: 'Reported by the bank for fraud' }, {
        token: finance.accessToken,
      }),
    );
    ok(await runJobs(inTwoMinutes()));
    expect(await escrowPayoutOf(deal.escrowId)).toEqual({ status: 'pending', attempted: false });

    const { approval } = ok(
      await post(adminUserUnfreeze, { user_id: deal.payee.id, reason: 'The bank withdrew its report' }, {
        token: finance.accessToken,
      }),
      202,
    );
    ok(await runJobs(inTwoMinutes()));
    expect(await escrowPayoutOf(deal.escrowId)).toEqual({ status: 'pending', attempted: false });

    const second = await newOperator(['finance']);
    await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${second.id}`;
    expect(
      ok(
        await post(adminApprovalDecide, {
          approval_id: approval.id,
          decision: 'approve',
          reason: 'Saw the bank letter withdrawing it',
        }, { token: second.accessToken }),
      ),
    ).toMatchObject({ status: 'approved' });
    ok(await runJobs(inTwoMinutes()));
    expect((await escrowPayoutOf(deal.escrowId))?.attempted).toBe(true);
  });
});
