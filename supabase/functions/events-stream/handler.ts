import { endpoint, EventStream } from '../../../shared/core/endpoint.ts';
import { RATE_LIMITED, VALIDATION_FAILED } from '../../../shared/core/refusals.ts';
import { streamCaller } from '../../../shared/events/auth.ts';
import { openStream, REPLAY_MAX } from '../../../shared/events/stream.ts';
import { eventsStreamQuery, STREAM_EVENTS } from '../../../shared/events/schema.ts';

export default endpoint({
  name: 'events-stream',
  summary: "The caller's live updates: messages, notifications, escrows and the wallet as they change",
  description: 'A signed-in user, with the bearer token or a ticket from `events-ticket` (`?ticket=`). Server-Sent ' +
    "Events of the caller's events only, each `id: <event id>`, `event: <kind>` and `data:` the object the REST " +
    'read of that name answers the caller when the event is sent (a `message` as in message-feed, a ' +
    '`notification` as in notification-list, an `escrow` as escrow-get answers, a `wallet` as wallet-get ' +
    `answers). Send the last id received as \`Last-Event-ID\` (or \`last_event_id\`) to resume: what was missed is ` +
    `sent first, in order, once; more than ${REPLAY_MAX} missed is one \`reset\` event instead (read your state ` +
    'again). A comment every 15 s keeps the stream open and checks the session: after a logout the stream ' +
    'ends. Each stream ends after 120 s with a `retry:` hint; reconnect with the last id. At most 5 open ' +
    'streams per user. Refusals before the stream starts are JSON, as everywhere.',
  refusals: [RATE_LIMITED],
  method: 'GET',
  auth: streamCaller,
  query: eventsStreamQuery,
  stream: {
    description: 'Server-Sent Events; the `data` of each event, by its name, is described under `x-events`',
    events: STREAM_EVENTS,
  },
  handler: async ({ req, user, query }) =>
    new EventStream(await openStream(user, lastEventId(req) ?? query.last_event_id)),
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
