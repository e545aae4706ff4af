// The fee breakdown of an escrow: one pure function over a fee schedule (docs/escrow.md, "Money").
// All arithmetic is integer kobo; every division rounds half up.

/** A category's row of private.fee_schedules (the migrations seed them; operators may change them). */
export interface FeeSchedule {
  /** platform fee, in basis points of the escrow amount (150 = 1.5%) */
  fee_bps: number;
  min_fee: number; // kobo
  max_fee: number; // kobo
  /** the payer's share of the platform fee, in basis points (5000 = half) */
  payer_share_bps: number;
  /** VAT on the payer's share, in basis points (750 = 7.5%) */
  vat_bps: number;
}

export interface FeeBreakdown {
  escrow_amount: number;
  payer_fee: number;
  vat: number;
  total_charge: number;
  seller_fee: number;
  /** a merchant escrow's commission, out of the payee's side (0 for an app escrow) */
  merchant_fee: number;
  seller_payout: number;
}

/** round(n * bps / 10000), half up, for non-negative integers */
export function bpsOf(n: number, bps: number): number {
  return Math.floor((n * bps + 5000) / 10000);
}

/**
 * platform fee = amount x fee_bps, at least min_fee and at most max_fee, never more than the
 * amount; the payer pays payer_share of it plus VAT on that share on top; the seller's share comes
 * out of the payout, and so does a merchant's fee (merchantFee, kobo). total_charge = amount +
 * payer_fee + vat; seller_payout = amount - seller_fee - merchant_fee.
 */
export function feeBreakdown(amount: number, s: FeeSchedule, merchantFee = 0): FeeBreakdown {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new RangeError('amount must be a positive whole number of kobo');
  }
  const fee = Math.min(Math.max(bpsOf(amount, s.fee_bps), s.min_fee), s.max_fee, amount);
  const payer_fee = bpsOf(fee, s.payer_share_bps);
  const seller_fee = fee - payer_fee;
  const vat = bpsOf(payer_fee, s.vat_bps);
  return {
    escrow_amount: amount,
    payer_fee,
    vat,
    total_charge: amount + payer_fee + vat,
    seller_fee,
    merchant_fee: merchantFee,
    seller_payout: amount - seller_fee - merchantFee,
  };
}

/** The breakdown in naira, as the API returns it. */
export function feeBreakdownView(b: FeeBreakdown) {
  const n = (k: number) => k / 100;
  return {
    escrow_amount: n(b.escrow_amount),
    payer_fee: n(b.payer_fee),
    vat: n(b.vat),
    total_charge: n(b.total_charge),
    seller_fee: n(b.seller_fee),
    merchant_fee: n(b.merchant_fee),
    seller_payout: n(b.seller_payout),
  };
}
