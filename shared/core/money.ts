// Money at the edge of the API: naira numbers with at most 2 decimals in, integer kobo inside.
import { z } from 'zod';

/** Largest amount any single operation accepts: NGN 100,000,000 (10^10 kobo). */
export const MAX_AMOUNT_KOBO = 10_000_000_000;

/**
 * At most 2 decimals, judged on the number as parsed: it must be the double nearest to a value with
 * at most 2 decimals (0.07, 19.99), so that 5000.001 and 5000.0000000001 are refused. Digits the JSON
 * parser drops before anything sees them (5000.00000000000001 reads as 5000) cannot be judged.
 */
export const hasAtMostTwoDecimals = (n: number): boolean => Math.round(n * 100) / 100 === n;

/**
 * Naira number (at most 2 decimals, within the bounds) -> integer kobo. Its JSON Schema: a number,
 * multipleOf 0.01, minimum and maximum in naira, and a description telling validators to judge the
 * decimals on the number as written (decimal arithmetic), not by a binary division.
 */
export const nairaAmount = (opts: { minKobo?: number; maxKobo?: number; note?: string } = {}) => {
  const min = opts.minKobo ?? 1;
  const max = opts.maxKobo ?? MAX_AMOUNT_KOBO;
  return z
    .number({ message: 'must be a number' })
    .refine((n) => Number.isFinite(n), 'must be a finite number')
    .refine(hasAtMostTwoDecimals, 'must have at most 2 decimal places')
    .transform((n) => Math.round(n * 100))
    .refine((k) => k >= min, `must be at least ${nairaEn(min)}`)
    .refine((k) => k <= max, `must be at most ${nairaEn(max)}`)
    .meta({
      minimum: min / 100,
      maximum: max / 100,
      multipleOf: 0.01,
      description: `Naira, ${nairaEn(min)} to ${nairaEn(max)}, at most 2 decimal places. Check the decimals on the ` +
        'number as written, in decimal: 19.99 and 0.07 are valid, 5000.001 and 5000.0000000001 are not. A validator ' +
        'that divides in binary floating point needs a tolerance (ajv: multipleOfPrecision). Digits beyond what a ' +
        'double holds are dropped by the JSON parser before the server sees the number.' +
        (opts.note ? ` ${opts.note}` : ''),
    });
};

/** Integer kobo (number, bigint or numeric string from Postgres) -> naira number. */
export function toNaira(kobo: number | bigint | string): number {
  return Number(kobo) / 100;
}

/** Timestamps from Postgres (ISO strings with microseconds, or Date) -> ISO 8601 string. */
export function iso(value: string | Date): string;
export function iso(value: string | Date | null | undefined): string | null;
export function iso(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.toISOString();
}

/**
 * An amount in kobo as people read it, exactly as SQL's private.naira() writes it
 * (`'NGN ' || to_char(kobo / 100.0, 'FM999,999,999,990.00')`): thousands separated by commas,
 * always two decimals, a leading minus when negative; beyond the twelve integer digits the
 * pattern has room for, to_char writes every digit as '#', and so does this.
 */
export function nairaEn(kobo: number | bigint | string): string {
  const k = BigInt(kobo);
  const abs = k < 0n ? -k : k;
  const whole = (abs / 100n).toString();
  const cents = (abs % 100n).toString().padStart(2, '0');
  const sign = k < 0n ? '-' : '';
  if (whole.length > 12) return `NGN ${sign}###,###,###,###.##`;
  return `NGN ${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}
