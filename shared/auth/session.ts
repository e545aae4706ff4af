// The auth modes of the auth area, which endpoints name as their `auth` (shared/core/endpoint.ts
// defines the interface): the user session, a bearer access token whose session is still live,
// and the admin, a user session whose user is an admin now.
import { asService, ensureSessionLive, sessionIsLive, type UserClaims } from '../core/db.ts';
import type { AuthMode } from '../core/endpoint.ts';
import { HttpError } from '../core/http.ts';
import { UNAUTHENTICATED } from '../core/refusals.ts';
import { type RequestSession, withRequestSession } from '../core/request-session.ts';
import { verifyAccessToken } from './tokens.ts';

/** The caller of a user-session or admin endpoint. */
export interface AuthUser {
  id: string;
  phone: string;
  sessionId: string;
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
 * The admin guard: the caller when the request carries a valid bearer token of a live session and
 * that user is an admin now (private.is_admin, as service_role), else null: no token, a bad or
 * expired one, an ended session, a user who is not (or no longer) an admin. The endpoint builder
 * answers null with functionNotFound, so nothing tells a non-admin that the endpoint exists. A
 * database failure is thrown (a 500), never taken for "not an admin".
 */
export async function adminUser(req: Request): Promise<AuthUser | null> {
  let user: AuthUser;
  try {
    user = await authenticate(req);
  } catch (err) {
    if (err instanceof HttpError && err.status === 401) return null;
    throw err;
  }
  const [row] = await asService((tx) => tx<{ admin: boolean }[]>`select private.is_admin(${user.id}) as admin`);
  return row?.admin === true ? user : null;
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

/**
 * auth 'admin': a user session whose user is an admin now (private.is_admin). Anyone else, with or
 * without a token, gets the 404 the server gives for a function that does not exist, whatever the
 * method and body (docs/security.md#admins).
 */
export const adminSession: AuthMode<AuthUser> = {
  name: 'admin',
  hidden: true,
  identify: adminUser,
};
