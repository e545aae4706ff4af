// The session of the bearer request being served, for the live-session check that rides in the
// request's first database statement (shared/core/db.ts). The endpoint builder opens the scope after it
// has verified the token's signature; every transaction begun inside it while the session is
// still unchecked asks private.session_assert in its setup statement (the role, the claims and
// the check in one statement), so a request that reads or writes anything learns in that same
// round trip whether its session is live. Outside a scope (webhooks, jobs, public endpoints)
// there is nothing to check.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestSession {
  readonly userId: string;
  readonly sessionId: string;
  /** unchecked until a statement (or the builder) asked; ended when Postgres said ES401. */
  state: 'unchecked' | 'live' | 'ended';
}

const scope = new AsyncLocalStorage<RequestSession>();

/** Runs fn with `session` as the current request's session. */
export function withRequestSession<T>(session: RequestSession, fn: () => Promise<T>): Promise<T> {
  return scope.run(session, fn);
}

/** Runs fn outside any request's scope (work for everyone, such as dispatching queued SMS). */
export function outsideRequest<T>(fn: () => Promise<T>): Promise<T> {
  return scope.exit(fn);
}

/** The current request's session while it has not been checked yet, else undefined. */
export function uncheckedSession(): RequestSession | undefined {
  const s = scope.getStore();
  return s?.state === 'unchecked' ? s : undefined;
}

/** The current request's session, whatever its state. */
export function requestSession(): RequestSession | undefined {
  return scope.getStore();
}

/** The SQLSTATE private.session_assert raises for an ended session. */
export const SESSION_ENDED = 'ES401';
