// Stream tickets (docs/events.md, "Opening a stream"): a browser's EventSource cannot send an
// Authorization header, so a signed-in app asks events-ticket for a ticket and opens the stream
// with `?ticket=`. A ticket is 32 random bytes, kept only as its SHA-256, bound to the session that
// asked for it: it opens streams (reconnects included) for 10 minutes, and stops the moment that
// session ends. A session keeps at most 20 live tickets; older ones are dropped.
import type { AuthUser } from '../auth/session.ts';
import { asService } from '../core/db.ts';
import { base64url, randomBytes, sha256Hex } from '../core/crypto.ts';

export const TICKET_TTL_SECONDS = 600;
export const TICKETS_PER_SESSION = 20;

const ticketHash = (ticket: string) => sha256Hex(`stream-ticket:${ticket}`);

/** A new ticket for the caller's session (a 401 when it has ended). */
export async function eventsTicket(user: AuthUser): Promise<{ ticket: string; expires_in: number }> {
  const ticket = `est_${base64url(randomBytes(32))}`;
  const hash = await ticketHash(ticket);
  await asService((tx) =>
    tx`select private.stream_ticket_create(${user.sessionId}::uuid, ${user.id}::uuid, decode(${hash}, 'hex'),
                                           ${TICKET_TTL_SECONDS}, ${TICKETS_PER_SESSION})`
  );
  return { ticket, expires_in: TICKET_TTL_SECONDS };
}

/** The caller a ticket stands for, while it and its session live; null otherwise. */
export async function ticketUser(ticket: string): Promise<AuthUser | null> {
  const hash = await ticketHash(ticket);
  const [row] = await asService((tx) =>
    tx<{ user_id: string; session_id: string; phone: string }[]>`
      select user_id, session_id, phone from private.stream_ticket_session(decode(${hash}, 'hex'))`
  );
  if (!row) return null;
  return {
    id: row.user_id,
    phone: row.phone,
    sessionId: row.session_id,
    lineage: row.session_id,
    claims: { sub: row.user_id, role: 'authenticated', session_id: row.session_id, phone: row.phone },
  };
}
