// The auth modes of the auth area, which endpoints name as their `auth` (shared/core/endpoint.ts
// defines the interface): the user session, a bearer access token whose session is still live
// (operators have modes of their own: shared/operators/auth.ts).
import { ensureSessionLive, sessionIsLive, type UserClaims } from '../core/db.ts';
import type { AuthMode } from '../core/endpoint.ts';
import { UNAUTHENTICATED } from '../core/refusals.ts';
import { type RequestSession, withRequestSession } from '../core/request-session.ts';
import { verifyAccessToken } from './tokens.ts';

/** The caller of a user-session or admin endpoint. */
export interface AuthUser {
  id: string;
  phone: string;
  sessionId: string;
  /** The refresh-token lineage the token was issued on (the session id for the first line). */
  lineage: string;
  claims: UserClaims;
}

/**
 * The caller of a bearer request from its token alone: signature, algorithm, issuer, audience and
 * expiry checked, no database. Whether the session is still live is asked by the request's first
 * statement (shared/core/request-session.ts), or by authenticate.
 */
export async function bearerUser(req: Request): Promise<AuthUser> {
  const header = req.headers.get('authorization') ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw UNAUTHENTICATED.error({ reason: 'missing' });
  const claims = await verifyAccessToken(match[1] as string);
  if (!claims) throw UNAUTHENTICATED.error({ reason: 'invalid' });
  return {
    id: claims.sub,
    phone: claims.phone,
    sessionId: claims.session_id,
    lineage: claims.lineage ?? claims.session_id,
    claims: { ...claims, role: 'authenticated' },
  };
}

/** Verifies the bearer token and that its session is still live (logout, reset, reuse revoke it). */
export async function authenticate(req: Request): Promise<AuthUser> {
  const user = await bearerUser(req);
  if (!(await sessionIsLive(user.sessionId, user.id))) throw UNAUTHENTICATED.error({ reason: 'ended' });
  return user;
}

/**
 * auth 'user': a bearer access token (401 without a valid one). Whether its session is still live is
 * checked by the first statement the request sends (shared/core/db.ts); a request that sent none
 * (a refusal before the handler, a handler without the database) checks it at the end, so an
 * ended session is a 401 whatever else was wrong, as if checked first.
 */
export const userSession: AuthMode<AuthUser> = {
  name: 'user',
  hidden: false,
  identify: bearerUser,
  async within(user, run) {
    const session: RequestSession = { userId: user.id, sessionId: user.sessionId, state: 'unchecked' };
    return await withRequestSession(session, async () => {
      let result: Awaited<ReturnType<typeof run>> | undefined;
      let thrown: unknown;
      try {
        result = await run();
      } catch (err) {
        thrown = err;
      }
      await ensureSessionLive();
      if (thrown !== undefined) throw thrown;
      return result as Awaited<ReturnType<typeof run>>;
    });
  },
};
