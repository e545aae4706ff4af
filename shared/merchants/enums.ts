// The closed lists of the merchants area's columns (tests/integration/enums.test.ts compares each
// with its column's check constraint).

/** A merchant's status: active, or frozen by an operator (its keys then authenticate nothing). */
export const MERCHANT_STATUSES = ['active', 'frozen', 'closed'] as const;
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];
