// Property tests of the fee breakdown over random amounts from NGN 0.01 to NGN 100,000,000.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FeeBreakdown, feeBreakdown as breakdownOver } from '../../shared/escrow/fees.ts';
import { FEE_SCHEDULES } from '../support/seeds.ts';

/** The schedule every category is seeded with (the migrations seed the same one for all four). */
const S = FEE_SCHEDULES.goods_products;
const feeBreakdown = (amount: number): FeeBreakdown => breakdownOver(amount, S);

const amounts = fc.integer({ min: 1, max: 10_000_000_000 }); // kobo

describe('feeBreakdown', () => {
  it('adds up: total = amount + payer fee + VAT, payout = amount - seller fee', () => {
    fc.assert(
      fc.property(amounts, (a) => {
        const b = feeBreakdown(a);
        expect(b.escrow_amount).toBe(a);
        expect(b.total_charge).toBe(a + b.payer_fee + b.vat);
        expect(b.seller_payout).toBe(a - b.seller_fee);
      }),
      { numRuns: 5000 },
    );
  });

  it('the platform fee is 1.5% (half up) clamped to [NGN 100, NGN 20,000] and never above the amount', () => {
    fc.assert(
      fc.property(amounts, (a) => {
        const b = feeBreakdown(a);
        const fee = b.payer_fee + b.seller_fee;
        const exact = Math.floor((a * 150 + 5000) / 10000);
        expect(fee).toBe(Math.min(Math.max(exact, S.min_fee), S.max_fee, a));
        expect(fee).toBeLessThanOrEqual(a);
        expect(fee).toBeLessThanOrEqual(S.max_fee);
        if (a >= S.min_fee) expect(fee).toBeGreaterThanOrEqual(S.min_fee);
      }),
      { numRuns: 5000 },
    );
  });

  it('splits the fee half and half (the payer gets the odd kobo) and VAT is 7.5% of the payer half', () => {
    fc.assert(
      fc.property(amounts, (a) => {
        const b = feeBreakdown(a);
        expect(b.payer_fee - b.seller_fee).toBeGreaterThanOrEqual(0);
        expect(b.payer_fee - b.seller_fee).toBeLessThanOrEqual(1);
        expect(Math.abs(b.vat * 10000 - b.payer_fee * 750)).toBeLessThanOrEqual(5000);
      }),
      { numRuns: 5000 },
    );
  });

  it('is integer, never negative, and monotone in the amount (more escrow never costs the payer less)', () => {
    fc.assert(
      fc.property(amounts, amounts, (x, y) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        const a = feeBreakdown(lo);
        const b = feeBreakdown(hi);
        for (const v of Object.values(a)) {
          expect(Number.isInteger(v)).toBe(true);
          expect(v).toBeGreaterThanOrEqual(0);
        }
        expect(b.total_charge).toBeGreaterThanOrEqual(a.total_charge);
        expect(b.seller_payout).toBeGreaterThanOrEqual(a.seller_payout);
      }),
      { numRuns: 3000 },
    );
  });

  it('matches worked examples', () => {
    // NGN 10,000: fee 150 (1.5%), payer 75, VAT 5.63 (5.625 half up), seller 75
    expect(feeBreakdown(1_000_000)).toEqual({
      escrow_amount: 1_000_000,
      payer_fee: 7_500,
      vat: 563,
      total_charge: 1_008_063,
      seller_fee: 7_500,
      merchant_fee: 0,
      seller_payout: 992_500,
    });
    // NGN 1,000: 1.5% is NGN 15, raised to the NGN 100 minimum
    expect(feeBreakdown(100_000)).toMatchObject({
      payer_fee: 5_000,
      seller_fee: 5_000,
      vat: 375,
      total_charge: 105_375,
    });
    // NGN 50: the minimum would exceed the amount, so the fee is the amount itself
    expect(feeBreakdown(5_000)).toMatchObject({ payer_fee: 2_500, seller_fee: 2_500, seller_payout: 2_500 });
    // NGN 0.01: one kobo of fee, to the payer; nothing to the seller
    expect(feeBreakdown(1)).toEqual({
      escrow_amount: 1,
      payer_fee: 1,
      vat: 0,
      total_charge: 2,
      seller_fee: 0,
      merchant_fee: 0,
      seller_payout: 1,
    });
    // a merchant escrow of NGN 10,000 with a merchant fee of NGN 500: the seller's payout is after both fees
    expect(breakdownOver(1_000_000, S, 50_000)).toMatchObject({
      seller_fee: 7_500,
      merchant_fee: 50_000,
      seller_payout: 942_500,
    });
    // NGN 100,000,000: capped at NGN 20,000
    expect(feeBreakdown(10_000_000_000)).toMatchObject({ payer_fee: 1_000_000, seller_fee: 1_000_000, vat: 75_000 });
  });

  it('refuses zero, negative and fractional kobo', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => feeBreakdown(bad)).toThrow(RangeError);
  });
});
