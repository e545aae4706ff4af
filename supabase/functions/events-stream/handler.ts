import { endpoint, EventStream } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED, VALIDATION_FAILED } from '../../../shared/core/refusals.ts';
import { streamCaller } from '../../../shared/events/auth.ts';
import { eventsStream, REPLAY_MAX, sseEvent } from '../../../shared/events/stream.ts';
import { eventsStreamQuery, STREAM_EVENTS } from '../../../shared/events/schema.ts';

export default endpoint({
  name: 'events-stream',
  summary: "The caller's live updates: messages, notifications, escrows and the wallet as they change",
  description: 'A signed-in user, with the bearer token or a ticket from `events-ticket` (`?ticket=`), gets ' +
    'Server-Sent Events of their own events, each `id`, `event` (`message`, `notification`, `escrow`, `wallet`) and ' +
    '`data`: the object that REST read answers them when the event is sent. With `Last-Event-ID` (or ' +
    `\`last_event_id\`) what was missed comes first, in order and once; more than ${REPLAY_MAX} is one \`reset\` ` +
    'event instead. A heartbeat comment every 15 s checks the session, and each stream ends after 120 s with a ' +
    '`retry:` hint (docs/events.md has the protocol; at most 5 streams per user; refusals before the stream are JSON).',
  refusals: [RATE_LIMITED],
  method: 'GET',
  auth: streamCaller,
  query: eventsStreamQuery,
  stream: {
    description: 'Server-Sent Events; the `data` of each event, by its name, is described under `x-events`',
    events: STREAM_EVENTS,
    // the wire as a client reads it: live, an event, a heartbeat (each event's data: x-events)
    example: `: ready\n\n${sseEvent('41', 'reset', '{"reason":"too_many_missed"}')}: heartbeat\n\n`,
  },
  handler: async ({ req, user, query }) =>
    new EventStream(await eventsStream(user, lastEventId(req) ?? query.last_event_id)),
});

/** The Last-Event-ID header (an EventSource sends back the last id it was given); a 400 when it is not an event id. */
function lastEventId(req: Request): string | undefined {
  const given = req.headers.get('last-event-id');
  if (given === null || given === '') return undefined;
  if (/^[1-9][0-9]{0,17}$/.test(given)) return given;
  throw VALIDATION_FAILED.error({ part: 'last_event_id' }, {
    details: [{ field: 'Last-Event-ID', message: 'must be the id of an event this stream sent' }],
  });
}
