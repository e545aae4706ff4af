// When a failed webhook delivery is tried again (docs/webhooks.md#retries): exponential backoff over
// about three days, each delay moved by up to 20% either way so that the deliveries of a receiver
// that was down do not all come back at the same second. After the last delay the delivery is failed.
const S = 1000;
const M = 60 * S;
const H = 60 * M;

/** The delay after the 1st, 2nd, ... failed attempt, before jitter (they add up to 71 h 35 min 5 s). */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * S,
  5 * M,
  30 * M,
  2 * H,
  5 * H,
  10 * H,
  10 * H,
  14 * H,
  14 * H,
  16 * H,
];

/** Attempts a delivery gets in all: the first and one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** How far a delay may move either way (0.2: from 80% to 120% of it). */
export const JITTER = 0.2;

/**
 * When to try again after `attempt` attempts have failed (1 after the first), or null when that was
 * the last one and the delivery is failed. `random` returns a number in [0, 1), as Math.random.
 */
export function nextAttemptAt(attempt: number, now: Date, random: () => number = Math.random): Date | null {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempt must be a whole number from 1: ${attempt}`);
  }
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  const r = Math.min(Math.max(random(), 0), 1);
  const delay = Math.round(base * (1 - JITTER + 2 * JITTER * r));
  return new Date(now.getTime() + delay);
}
