// The operator API, as the console calls it: the base URL from config.js, the operator's session
// in sessionStorage (gone when the tab closes), refreshed with auth-refresh shortly before its
// access token expires. A refusal is thrown as a Refusal holding the answer's status, code,
// message and details, for the page to show as it is.
import config from './config.js';

const KEY = 'escrow-console.session';
/** Refresh when the access token has less than this left (ms). */
const REFRESH_MARGIN_MS = 120_000;

const base = new URL(config.apiBase.replace(/\/*$/, '/'), location.href);

export class Refusal extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? [];
  }
}

/**
 * The stored session: {user, access_token, refresh_token, expires_at, passed_until, roles} or null.
 * `roles` are the operator's roles as admin-totp-verify answered them (the API checks them again on
 * every call: they only choose which forms the pages show).
 */
export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
  } catch {
    return null;
  }
}

function store(s) {
  if (s === null) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, JSON.stringify(s));
  for (const fn of listeners) fn(s);
}

const listeners = new Set();
/** Calls fn with the session (or null) whenever it changes. */
export function onSession(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Keeps a new session from auth-verify or auth-refresh, with the pass and roles of the one it replaces. */
function keep(data, previous) {
  store({
    user: data.user,
    access_token: data.session.access_token,
    refresh_token: data.session.refresh_token,
    expires_at: Date.now() + data.session.expires_in * 1000,
    passed_until: previous?.passed_until ?? null,
    roles: previous?.roles ?? [],
  });
}

/** Keeps admin-totp-verify's answer: when the pass ends, and the roles it was given with. */
export function markPassed(expiresAt, roles) {
  const s = session();
  if (s) store({ ...s, passed_until: Date.parse(expiresAt), roles: roles ?? [] });
}

/** The operator's roles (as the second factor's pass answered them). */
export const roles = (s = session()) => s?.roles ?? [];

/** Whether the operator holds one of `needed` (the console shows only the forms this admits). */
export const mayAct = (needed) => needed.some((r) => roles().includes(r));

/** Whether the session holds a second-factor pass that has not ended. */
export function passed(s = session()) {
  return s !== null && s.passed_until !== null && s.passed_until > Date.now();
}

export function forget() {
  store(null);
}

async function send(name, { method = 'GET', query, body, token } = {}) {
  const url = new URL(name, base);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new Refusal(0, 'network_error', `The API at ${base.origin} could not be reached`);
  }
  let json = null;
  try {
    json = await res.json();
  } catch {
    // not JSON: worded below
  }
  if (res.ok && json?.success) return { status: res.status, data: json.data };
  throw new Refusal(
    res.status,
    json?.code ?? 'unexpected_answer',
    json?.error ?? `The API answered ${res.status} without an explanation`,
    json?.details,
  );
}

let refreshing = null;

/** auth-refresh with the stored refresh token (one at a time); a refusal ends the session here. */
export function refresh() {
  const s = session();
  if (!s) return Promise.reject(new Refusal(401, 'unauthenticated', 'Not signed in'));
  refreshing ??= send('auth-refresh', { method: 'POST', body: { refresh_token: s.refresh_token } })
    .then(({ data }) => keep(data, s))
    .catch((err) => {
      forget();
      throw err;
    })
    .finally(() => (refreshing = null));
  return refreshing;
}

/** A call without the session (sign-in). */
export const anonymous = (name, opts) => send(name, opts).then((r) => r.data);

/**
 * A call with the session's access token, refreshed first when it is about to expire. An operator
 * endpoint answers an expired or ended token with the 404 of a missing function, not a 401: that
 * answer, and a 401 unauthenticated, are retried once after a refresh.
 */
export async function call(name, opts = {}) {
  return (await answer(name, opts)).data;
}

/** An action: POSTs `body` with the session, answering {status, data} (202: waiting for approval). */
export const act = (name, body) => answer(name, { method: 'POST', body });

async function answer(name, opts) {
  let s = session();
  if (!s) throw new Refusal(401, 'unauthenticated', 'Not signed in');
  if (s.expires_at - REFRESH_MARGIN_MS < Date.now()) {
    await refresh();
    s = session();
  }
  try {
    return await send(name, { ...opts, token: s.access_token });
  } catch (err) {
    const stale = err instanceof Refusal &&
      ((err.status === 401 && err.code === 'unauthenticated') ||
        (err.status === 404 && err.code === 'function_not_found'));
    if (!stale) {
      if (err instanceof Refusal && err.code === 'second_factor_required') {
        const now = session();
        if (now) store({ ...now, passed_until: null });
      }
      throw err;
    }
    await refresh();
    return await send(name, { ...opts, token: session().access_token });
  }
}

/** Signs in: the session of auth-verify (login), kept, without a second-factor pass yet. */
export async function signIn(phone, otpCode, password) {
  const data = await anonymous('auth-verify', {
    method: 'POST',
    body: { phone, otp_code: otpCode, context: 'login', password },
  });
  keep(data, null);
  return data;
}

/** auth-logout, then the session is forgotten whatever it answered. */
export async function signOut() {
  const s = session();
  try {
    if (s) await send('auth-logout', { method: 'POST', token: s.access_token });
  } catch {
    // the session is forgotten here either way
  } finally {
    forget();
  }
}
