// The wake-up after writes (docs/events.md, "Live delivery"). A transition never sends NOTIFY:
// Postgres takes a lock for the whole database from a NOTIFY to its commit. Instead, after a write
// request has been answered (its transactions committed), the instance that served it sends at most
// one `NOTIFY escrow_events` per 100 ms on a statement of its own, outside any transaction of
// money; the servers' listeners then read the log from where they were. A wake-up asked while one
// is waiting joins it, so the last write of a burst is always followed by one.
//
// Listeners in this same process (the local server serves every function in one) are also told
// directly, without waiting for Postgres to pass the notification around.
import { getConfig } from './config.ts';
import { db } from './db.ts';
import { errorMessage, log } from './log.ts';

/** The channel the wake-ups go out on. */
export const WAKE_CHANNEL = 'escrow_events';
/** The shortest time between two wake-ups of one instance. */
export const WAKE_EVERY_MS = 100;

const local = new Set<() => void>();
let lastSentAt = -Infinity;
let waiting: Promise<void> | undefined;

/** Registers a listener of this process, told at every wake-up; returns its removal. */
export function onLocalWake(listener: () => void): () => void {
  local.add(listener);
  return () => local.delete(listener);
}

/**
 * Asks for a wake-up: resolves once it has been sent (at most WAKE_EVERY_MS after the previous
 * one). Never throws: a wake-up that could not be sent is logged, and the listeners' safety poll
 * reads the log anyway.
 */
export function wakeListeners(): Promise<void> {
  waiting ??= new Promise<void>((resolve) => {
    const wait = Math.max(0, lastSentAt + WAKE_EVERY_MS - performance.now());
    setTimeout(() => {
      waiting = undefined;
      lastSentAt = performance.now();
      for (const listener of local) listener();
      send().finally(resolve);
    }, wait);
  });
  return waiting;
}

/** NOTIFY, when some instance may be listening (a session connection is configured). */
async function send(): Promise<void> {
  if (!getConfig().DATABASE_SESSION_URL) return;
  try {
    await db()`select pg_notify(${WAKE_CHANNEL}, '')`;
  } catch (err) {
    log.warn('events.wake_failed', { error: errorMessage(err) });
  }
}
