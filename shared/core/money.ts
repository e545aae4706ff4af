// Money at the edge of the API: naira numbers with at most 2 decimals in, integer kobo inside.
import { z } from 'zod';

/** Largest amount any single operation accepts: NGN 100,000,000 (10^10 kobo). */
export const MAX_AMOUNT_KOBO = 10_000_000_000;

/** Naira number (0.01 .. 100,000,000, at most 2 decimals) -> integer kobo. */
export const nairaAmount = (opts: { minKobo?: number; maxKobo?: number } = {}) => {
  const min = opts.minKobo ?? 1;
  const max = opts.maxKobo ?? MAX_AMOUNT_KOBO;
  return z
    .number({ message: 'must be a number' })
    .refine((n) => Number.isFinite(n), 'must be a finite number')
    .refine((n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6, 'must have at most 2 decimal places')
    .transform((n) => Math.round(n * 100))
    .refine((k) => k >= min, `must be at least ${nairaEn(min)}`)
    .refine((k) => k <= max, `must be at most ${nairaEn(max)}`)
    .meta({
      minimum: min / 100,
      maximum: max / 100,
      description: `Naira, at most 2 decimal places: ${nairaEn(min)} to ${nairaEn(max)}`,
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
