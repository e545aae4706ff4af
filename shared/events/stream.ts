// One live stream (docs/events.md, "The stream"): Server-Sent Events of the caller's events, each
// `id: <event id>`, `event: <kind>`, `data: <the REST object as the caller reads it now>`.
//
// Opening: the stream joins this server's reader (./hub.ts) first and holds what it is offered;
// then it replays what the caller missed after Last-Event-ID (at most 500; more, or an id that is
// not one of theirs, is one `reset` event instead), and then delivers what it held after the
// replay's horizon. Every event goes out once, in commit order.
// Closing: after STREAM_MAX_SECONDS with a `retry:` hint, when the session ends (found at a
// heartbeat), when the client goes away, or when it reads too slowly (more than 1 MiB waiting).
import type { AuthUser } from '../auth/session.ts';
import { getConfig } from '../core/config.ts';
import { callAsService, ensureSessionLive } from '../core/db.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { errorMessage, log } from '../core/log.ts';
import { RATE_LIMITED } from '../core/refusals.ts';
import { hub, isAfter, lane, type PlacedEvent, type Position, type Subscriber } from './hub.ts';
import { renderEvent } from './render.ts';
import type { StreamEventName } from './schema.ts';

/** Events missed that a resume replays; more is a `reset`. */
export const REPLAY_MAX = 500;
/** What a client that reads too slowly may leave waiting before its stream is ended. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** The reconnection delay the end of a stream suggests, in milliseconds (spread by up to a second). */
const RETRY_MS = 1_000;

const encoder = new TextEncoder();

/** One SSE event, as the wire has it (the data is JSON text: one line). */
export function sseEvent(id: string | null, event: StreamEventName, data: string): string {
  return `${id === null ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;
}

type Queued = PlacedEvent | { floor: Position } | { reset: string; lastId: string | null };

class Stream implements Subscriber {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  /** Offers held while the resume is read; null once live. */
  private held: PlacedEvent[] | null = [];
  private readonly queue: Queued[] = [];
  private cursor: Position = { xact: 0n, id: 0n };
  private pumping = false;
  private closed = false;
  private maxTimer: ReturnType<typeof setTimeout> | undefined;
  readonly body: ReadableStream<Uint8Array>;

  constructor(readonly user: AuthUser) {
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      // the client went away
      cancel: () => this.close(),
    });
  }

  offer(event: PlacedEvent): void {
    if (this.closed) return;
    if (this.held) this.held.push(event);
    else this.push(event);
  }

  heartbeat(): void {
    this.write(': heartbeat\n\n');
  }

  end(): void {
    this.close();
  }

  /** After the resume: its events (or a reset), then what was held, past the horizon. */
  goLive(first: Queued[], horizon: bigint): void {
    const held = this.held ?? [];
    this.held = null;
    // a comment, so that the client knows the stream is open and a proxy sends the head on
    this.write(': ready\n\n');
    this.queue.push(...first, { floor: { xact: horizon, id: 0n } }, ...held);
    this.pump();
    const max = getConfig().STREAM_MAX_SECONDS * 1000;
    this.maxTimer = setTimeout(() => {
      this.write(`retry: ${RETRY_MS + Math.floor(Math.random() * 1000)}\n\n`);
      this.close();
    }, max);
  }

  private push(item: Queued): void {
    this.queue.push(item);
    this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed && this.queue.length > 0) {
        const item = this.queue.shift() as Queued;
        if ('floor' in item) {
          if (isAfter(item.floor, this.cursor)) this.cursor = item.floor;
        } else if ('reset' in item) {
          this.write(sseEvent(item.lastId, 'reset', JSON.stringify({ reason: item.reset })));
        } else if (isAfter(item.at, this.cursor)) {
          this.cursor = item.at;
          const data = await lane(() => renderEvent(this.user, item));
          if (data !== null) this.write(sseEvent(item.id, item.kind as StreamEventName, data));
        }
      }
    } catch (err) {
      // the client reconnects with the last id it received, and is given the rest again
      log.warn('events.stream_failed', { error: errorMessage(err) });
      this.close();
    } finally {
      this.pumping = false;
    }
  }

  private write(text: string): void {
    if (this.closed) return;
    try {
      this.controller.enqueue(encoder.encode(text));
      if ((this.controller.desiredSize ?? 0) < -MAX_BUFFERED_BYTES) {
        log.info('events.stream_slow_reader', { user_id: this.user.id });
        this.close();
      }
    } catch {
      this.close();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.maxTimer);
    hub.leave(this);
    try {
      this.controller.close();
    } catch {
      // already closed by the client
    }
  }
}

interface ReplayRow {
  id: string | null;
  xact: string;
  kind: string;
  subject_id: string | null;
}

/**
 * Opens the caller's stream, resuming after `lastEventId` when given. A 429 when the caller
 * already has STREAM_MAX_PER_USER streams on this server.
 */
export async function eventsStream(
  user: AuthUser,
  lastEventId: string | undefined,
): Promise<ReadableStream<Uint8Array>> {
  // a dead session is refused before anything is set up (free when a ticket's statement found it live)
  await ensureSessionLive();
  const max = getConfig().STREAM_MAX_PER_USER;
  if (hub.streamsOf(user.id) >= max) {
    const wait = getConfig().STREAM_MAX_SECONDS;
    throw RATE_LIMITED.error(
      { message: `Too many open streams (${max}): close one, or try again in ${describeWait(wait)}` },
      { headers: retryAfterHeader(wait) },
    );
  }
  const stream = new Stream(user);
  await hub.join(stream);
  try {
    const [rows] = await lane(() =>
      callAsService((tx) => [
        tx<ReplayRow[]>`
          select id::text, xact::text, kind, subject_id
            from private.events_replay(${user.id}::uuid, ${lastEventId ?? null}::bigint, ${REPLAY_MAX + 1})`,
      ])
    );
    const marker = rows.at(-1) as ReplayRow;
    const missed = rows.slice(0, -1).map((r): PlacedEvent => ({
      id: r.id as string,
      kind: r.kind,
      subject_id: r.subject_id as string,
      at: { xact: BigInt(r.xact), id: BigInt(r.id as string) },
    }));
    const horizon = BigInt(marker.xact);
    if (marker.kind === 'unknown') stream.goLive([{ reset: 'unknown_position', lastId: marker.id }], horizon);
    else if (missed.length > REPLAY_MAX) stream.goLive([{ reset: 'too_many_missed', lastId: marker.id }], horizon);
    else stream.goLive(missed, horizon);
  } catch (err) {
    stream.close();
    throw err;
  }
  return stream.body;
}

/** Ends every stream of this server (it is stopping). */
export function closeAllStreams(): void {
  hub.closeAll();
}
