// A payout account the Paystack fake's bank knows, saved through payout-add (the first becomes the
// default, which wallet-withdraw and escrow payouts pay); and an escrow payout left unsent, as a
// crash leaves it, for the suites of the job.
import { expect } from 'vitest';
import { expectOk, post } from './api.ts';
import { testDb } from './db.ts';
import { type Deal, escrowOp } from './escrows.ts';
import { raiseTier } from './kyc.ts';
import { paystack } from './paystack.ts';
import type { TestUser } from './users.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';

/** Saves a payout account for `u` at a bank the fake knows (201 expected). */
export async function addPayout(u: TestUser): Promise<void> {
  const accountNumber = String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999)).slice(0, 10);
  await paystack.registerAccount('058', accountNumber, 'ADA OBI');
  const r = await post(payoutAdd, {
    bank_code: '058',
    bank_name: 'Guaranty Trust Bank',
    account_number: accountNumber,
    account_name: 'Ada Obi',
  }, { token: u.accessToken });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/**
 * Releases `deal` to its payee (raised to tier 3, with no payout account yet: the money stays in
 * their wallet), then saves a payout account and commits the escrow payout without handing it to
 * the provider, as a crash between the commit and the provider call leaves it.
 */
export async function releaseWithUnsentPayout(deal: Deal): Promise<void> {
  expect(await raiseTier(deal.payee.id, 3)).toBe(3);
  expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
  await addPayout(deal.payee);
  await testDb().begin(async (tx) => {
    await tx`select private.kyc_lock(${deal.payee.id})`;
    await tx`select private.escrow_start_payout(e, ${deal.feeBreakdown.seller_payout * 100})
               from public.escrows e where e.id = ${deal.escrowId}`;
  });
}

/** The escrow payout of an escrow: its status, and whether its transfer was handed to the provider. */
export async function escrowPayoutOf(escrowId: string): Promise<{ status: string; attempted: boolean } | undefined> {
  const [row] = await testDb()<{ status: string; attempted: boolean }[]>`
    select status, metadata ? 'transfer_attempted_at' as attempted
      from public.transactions where escrow_id = ${escrowId} and type = 'escrow_payout'`;
  return row;
}
