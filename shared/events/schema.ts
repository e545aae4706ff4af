// The live stream's contract (docs/events.md): the ticket's answer, the stream's query, and the
// `data` of each event, which is the object the REST read of that name answers.
import { z } from 'zod';
import { count } from '../core/schema.ts';
import { feedItemResponse } from '../conversations/schema.ts';
import { notificationResponse } from '../notifications/schema.ts';
import { escrowResponse } from '../escrow/schema.ts';
import { walletResponse } from '../money/schema.ts';

/** A ticket: opaque, 43 base64url characters after its prefix. */
export const TICKET_PATTERN = /^est_[A-Za-z0-9_-]{43}$/;

export const eventsTicketResponse = z.strictObject({
  ticket: z.string().regex(TICKET_PATTERN).describe(
    'For `?ticket=` on events-stream, where a browser cannot send headers; shown once, kept hashed',
  ),
  expires_in: count.describe('Seconds the ticket opens streams for (600), while the session that asked lives'),
});

export const eventsStreamQuery = z.strictObject({
  ticket: z.string().regex(TICKET_PATTERN).optional().describe(
    'A ticket from events-ticket, instead of the Authorization header (EventSource sends none)',
  ),
  last_event_id: z.string().regex(/^[1-9][0-9]{0,17}$/).optional().describe(
    'The id of the last event received, as the Last-Event-ID header says it (the header wins)',
  ),
});

/** The `reset` event's data: too much was missed, so the client reads its state again. */
export const resetEventData = z.strictObject({
  reason: z.enum(['too_many_missed', 'unknown_position']).describe(
    "More than 500 events were missed, or the Last-Event-ID is not one of the caller's events",
  ),
});

/** Each event's name, and the schema of its `data`. */
export const STREAM_EVENTS = {
  message: feedItemResponse,
  notification: notificationResponse,
  escrow: escrowResponse,
  wallet: walletResponse,
  reset: resetEventData,
} as const;

export type StreamEventName = keyof typeof STREAM_EVENTS;
