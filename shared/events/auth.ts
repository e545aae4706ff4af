// Who opens a stream: the bearer of an access token (fetch-based clients, mobile apps), or, for
// a browser's EventSource, which cannot send headers, the holder of a ticket (`?ticket=`) made by
// events-ticket for a session that still lives. Either way a dead session is a 401 before the
// stream starts, and the heartbeat checks it again while it runs.
import { type AuthUser, bearerUser, userSession } from '../auth/session.ts';
import type { AuthMode } from '../core/endpoint.ts';
import { UNAUTHENTICATED } from '../core/refusals.ts';
import { withRequestSession } from '../core/request-session.ts';
import { TICKET_PATTERN } from './schema.ts';
import { ticketUser } from './tickets.ts';

/** Callers found by a ticket: the statement that found the ticket found their session live. */
const byTicket = new WeakSet<AuthUser>();

export const streamCaller: AuthMode<AuthUser> = {
  name: 'user',
  hidden: false,
  async identify(req) {
    const ticket = new URL(req.url).searchParams.get('ticket');
    // the header wins: a ticket is for clients that cannot send one
    if (ticket === null || req.headers.has('authorization')) return await bearerUser(req);
    const user = TICKET_PATTERN.test(ticket) ? await ticketUser(ticket) : null;
    if (!user) throw UNAUTHENTICATED.error({ reason: 'invalid' });
    byTicket.add(user);
    return user;
  },
  async within(user, run) {
    if (byTicket.has(user)) {
      return await withRequestSession({ userId: user.id, sessionId: user.sessionId, state: 'live' }, run);
    }
    return await (userSession.within as NonNullable<typeof userSession.within>)(user, run);
  },
};
