// A payout account the Paystack fake's bank knows, saved through payout-add (the first becomes the
// default, which wallet-withdraw and escrow payouts pay).
import { expect } from 'vitest';
import { post } from './api.ts';
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
