// One server's live streams share one reader of the event log (docs/events.md, "Live delivery").
//
// - The reader keeps one position in the log, (xact, id) in commit order, and reads the next
//   events of the whole log for the users whose streams are open here (private.events_window),
//   when woken: by a NOTIFY on the one LISTEN connection of the server (DATABASE_SESSION_URL), or
//   without one by a poll every second; a write served by this same process wakes it directly.
// - Each stream has its own position too, and takes only events after it, so a stream that
//   joined while the reader was reading, or that replayed its missed events first, neither misses
//   nor repeats one (tests/integration/events-stream.test.ts).
// - All database work of the streams (reading the window, rendering each event as its recipient
//   reads it, the heartbeat's session check, a resume) goes one at a time through one lane, so a
//   server holds at most one pooled connection for its streams, and the LISTEN connection.
// - The heartbeat asks Postgres once for every stream's session: a stream whose session ended
//   (logout, a password reset) is closed.
import postgres from 'postgres';
import type { AuthUser } from '../auth/session.ts';
import { getConfig } from '../core/config.ts';
import { callAsService } from '../core/db.ts';
import { errorMessage, log } from '../core/log.ts';
import { outsideRequest } from '../core/request-session.ts';
import { onLocalWake, WAKE_CHANNEL } from '../core/wake.ts';
import type { LoggedEvent } from './render.ts';

/** A place in the log in commit order: every event at or before it is behind. */
export interface Position {
  xact: bigint;
  id: bigint;
}

export const isAfter = (a: Position, b: Position) => a.xact > b.xact || (a.xact === b.xact && a.id > b.id);

/** An event as the readers pass it on, with its place in commit order. */
export interface PlacedEvent extends LoggedEvent {
  at: Position;
}

/** What the reader needs of a stream. */
export interface Subscriber {
  readonly user: AuthUser;
  /** An event for this stream's user, in commit order (perhaps one the stream already has). */
  offer(event: PlacedEvent): void;
  /** The session was found live at a heartbeat. */
  heartbeat(): void;
  /** The stream must end (its session ended). */
  end(): void;
}

/** Where the server hears of new events: LISTEN on a session connection, or a poll. */
export type WakeSource = { kind: 'listen'; url: string; safetyPollMs: number } | { kind: 'poll'; everyMs: number };

/**
 * LISTEN needs a connection that keeps its session: DATABASE_SESSION_URL, never DATABASE_URL (the
 * transaction pooler accepts LISTEN and then never delivers a notification). Without one, a poll.
 */
export function wakeSource(config: { DATABASE_SESSION_URL?: string | undefined }): WakeSource {
  return config.DATABASE_SESSION_URL
    ? { kind: 'listen', url: config.DATABASE_SESSION_URL, safetyPollMs: 5_000 }
    : { kind: 'poll', everyMs: 1_000 };
}

/** Events read per statement from the log. */
const WINDOW = 500;

let laneTail: Promise<unknown> = Promise.resolve();

/** Runs the streams' database work one piece at a time, outside any request's scope. */
export function lane<T>(work: () => Promise<T>): Promise<T> {
  const run = laneTail.then(() => outsideRequest(work));
  laneTail = run.catch(() => {});
  return run;
}

interface WindowRow {
  id: string;
  xact: string;
  recipient: string | null;
  kind: string;
  subject_id: string;
}

class Hub {
  private readonly byUser = new Map<string, Set<Subscriber>>();
  private position: Position | null = null;
  private reading = false;
  private again = false;
  private stops: (() => void)[] = [];
  /** Settles once the LISTEN of this reader is in place (or failed, and the safety poll reads). */
  private listening: Promise<void> = Promise.resolve();

  get size(): number {
    let n = 0;
    for (const s of this.byUser.values()) n += s.size;
    return n;
  }

  streamsOf(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0;
  }

  /**
   * Adds a stream; resolves once the reader has a position, so that whatever the stream reads for
   * itself from then on (a resume) reaches at least as far as the reader has.
   */
  async join(sub: Subscriber): Promise<void> {
    const first = this.size === 0;
    const set = this.byUser.get(sub.user.id) ?? new Set();
    set.add(sub);
    this.byUser.set(sub.user.id, set);
    if (first) this.start();
    await this.listening;
    if (this.position === null) {
      const horizon = await currentHorizon();
      this.position ??= { xact: horizon, id: 0n };
    }
  }

  leave(sub: Subscriber): void {
    const set = this.byUser.get(sub.user.id);
    if (!set?.delete(sub)) return;
    if (set.size === 0) this.byUser.delete(sub.user.id);
    if (this.size === 0) this.stop();
  }

  /** Reads the log now (or again right after the read under way). */
  wake(): void {
    if (this.size === 0) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.readAll().finally(() => {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async readAll(): Promise<void> {
    try {
      for (;;) {
        const from = this.position;
        if (from === null || this.size === 0) return;
        const users = [...this.byUser.keys()];
        const [rows] = await lane(() =>
          callAsService((tx) => [
            tx<WindowRow[]>`
              select id::text, xact::text, recipient, kind, subject_id
                from private.events_window(${users}::uuid[], ${from.xact.toString()}::xid8, ${from.id.toString()}::bigint,
                                           ${WINDOW})`,
          ])
        );
        let events = 0;
        let last = '';
        for (const row of rows) {
          const at = { xact: BigInt(row.xact), id: BigInt(row.id) };
          if (row.id !== last) events++;
          last = row.id;
          if (this.position === null || !isAfter(at, this.position)) continue;
          if (row.recipient) {
            for (const sub of this.byUser.get(row.recipient) ?? []) {
              sub.offer({ id: row.id, kind: row.kind, subject_id: row.subject_id, at });
            }
          }
        }
        // every event of the window is behind, whoever it was for
        const tail = rows.at(-1);
        if (tail && this.position !== null) this.position = { xact: BigInt(tail.xact), id: BigInt(tail.id) };
        if (events < WINDOW) return;
      }
    } catch (err) {
      // the next wake-up or poll reads from the same position
      log.warn('events.read_failed', { error: errorMessage(err) });
    }
  }

  private async heartbeat(): Promise<void> {
    const subs = [...this.byUser.values()].flatMap((s) => [...s]);
    if (subs.length === 0) return;
    const sessions = [...new Set(subs.map((s) => s.user.sessionId))];
    try {
      const [rows] = await lane(() =>
        callAsService((tx) => [tx<{ id: string }[]>`select id from private.sessions_live(${sessions}::uuid[]) id`])
      );
      const live = new Set(rows.map((r) => r.id));
      for (const sub of subs) {
        if (live.has(sub.user.sessionId)) sub.heartbeat();
        else sub.end();
      }
    } catch (err) {
      // the streams stay open; the next heartbeat asks again
      log.warn('events.heartbeat_failed', { error: errorMessage(err) });
      for (const sub of subs) sub.heartbeat();
    }
  }

  private start(): void {
    const config = getConfig();
    const source = wakeSource(config);
    const wake = () => this.wake();
    this.stops.push(onLocalWake(wake));
    const heartbeat = setInterval(() => void this.heartbeat(), config.STREAM_HEARTBEAT_SECONDS * 1000);
    this.stops.push(() => clearInterval(heartbeat));
    if (source.kind === 'poll') {
      const poll = setInterval(wake, source.everyMs);
      this.stops.push(() => clearInterval(poll));
      return;
    }
    const safety = setInterval(wake, source.safetyPollMs);
    this.stops.push(() => clearInterval(safety));
    const listener = postgres(source.url, {
      max: 1,
      onnotice: () => {},
      connection: { application_name: 'escrow-events-listener' },
      backoff: (attempts: number) => Math.min(0.05 * 2 ** attempts, 2),
    });
    // onlisten runs on every (re)connection: what was written meanwhile is read then
    this.listening = listener.listen(WAKE_CHANNEL, wake, wake).then(() => {}, (err) => {
      log.warn('events.listen_failed', { error: errorMessage(err) });
    });
    this.stops.push(() => void listener.end({ timeout: 1 }).catch(() => {}));
  }

  private stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.position = null;
    this.listening = Promise.resolve();
  }

  /** Ends every stream (the server is stopping). */
  closeAll(): void {
    for (const sub of [...this.byUser.values()].flatMap((s) => [...s])) sub.end();
  }
}

/** The oldest transaction still running: every event before it in commit order is final. */
export async function currentHorizon(): Promise<bigint> {
  const [[row]] = await lane(() =>
    callAsService((tx) => [tx<{ horizon: string }[]>`select private.events_horizon()::text as horizon`])
  );
  return BigInt((row as { horizon: string }).horizon);
}

/** This server's reader. */
export const hub = new Hub();
