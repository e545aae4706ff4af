import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { eventsTicket } from '../../../shared/events/tickets.ts';
import { eventsTicketResponse } from '../../../shared/events/schema.ts';

export default endpoint({
  name: 'events-ticket',
  summary: "Makes a ticket that opens the caller's live stream where headers cannot be sent (a browser's EventSource)",
  description: 'A signed-in user. The ticket opens `events-stream?ticket=` (reconnects included) for 10 minutes, as ' +
    'long as the session that asked for it lives; it is shown once and kept only hashed. A session keeps at most ' +
    '20 live tickets (the oldest go first). Apps that can send headers open the stream with their bearer token ' +
    'instead.',
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: false,
  repeat: 'makes another ticket: a ticket is shown once, so none is ever kept to be answered again',
  response: eventsTicketResponse,
  handler: ({ user }) => eventsTicket(user),
});
