// Amounts: the API speaks naira (two decimals at most), the ledger and the database kobo.

/** Naira to kobo, as the server converts them (rounded to the nearest kobo). */
export const kobo = (naira: number) => Math.round(naira * 100);
