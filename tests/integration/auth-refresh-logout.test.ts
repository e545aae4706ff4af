// auth-refresh (rotation, grace for the previous token, reuse detection revoking the session,
// validation) and auth-logout (ends the current session only).
import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { type ApiResult, fieldsOf, get, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { signUp, type TestUser } from '../support/users.ts';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';
import authRefresh from '../../supabase/functions/auth-refresh/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';

interface Tokens {
  access: string;
  refresh: string;
}

const tokensOf = (res: ApiResult): Tokens => ({
  access: res.body.data.session.access_token,
  refresh: res.body.data.session.refresh_token,
});

const sessionIdOf = (accessToken: string) => decodeJwt(accessToken).session_id as string;

async function refresh(token: string): Promise<ApiResult> {
  return post(authRefresh, { refresh_token: token });
}

async function refreshOk(token: string): Promise<Tokens> {
  const res = await refresh(token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return tokensOf(res);
}

async function profileStatus(accessToken: string): Promise<number> {
  return (await get(profileGet, { token: accessToken })).status;
}

function expect401(res: ApiResult, code?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  if (code) expect(res.body.code).toBe(code);
  expect(res.body.success).toBe(false);
  expect(res.body.status).toBe(401);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error.length).toBeGreaterThan(0);
  expect(res.body.details).toBeUndefined();
}

/** Logs the user in again (a second device): a new, separate session. */
async function loginAgain(user: TestUser): Promise<Tokens> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${user.phone}`}`;
  expect((await post(authSendOtp, { phone: user.phone, context: 'login' })).status).toBe(200);
  const res = await post(authVerify, {
    phone: user.phone,
    otp_code: await lastOtp(user.phone),
    context: 'login',
    password: user.password,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return tokensOf(res);
}

/** Moves the rotation of every rotated token of the session `seconds` into the past. */
async function ageRotations(accessToken: string, seconds: number): Promise<void> {
  await testDb()`update private.refresh_tokens set rotated_at = rotated_at - make_interval(secs => ${seconds})
                 where session_id = ${sessionIdOf(accessToken)} and rotated_at is not null`;
}

describe('auth-refresh', () => {
  it('returns a new session with a different refresh token, and the new access token works', async () => {
    const user = await signUp();
    const res = await refresh(user.refreshToken);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.status).toBe(200);
    expect(res.body.data.user).toEqual({ id: user.id, phone: user.phone });
    expect(res.body.data.session).toMatchObject({ expires_in: 3600, token_type: 'bearer' });
    const next = tokensOf(res);
    expect(next.refresh).not.toBe(user.refreshToken);
    // the same session continues
    expect(sessionIdOf(next.access)).toBe(sessionIdOf(user.accessToken));
    const profile = await get(profileGet, { token: next.access });
    expect(profile.status).toBe(200);
    expect(profile.body.data.id).toBe(user.id);
    // and the new refresh token can be rotated in its turn
    const third = await refreshOk(next.refresh);
    expect(third.refresh).not.toBe(next.refresh);
    expect(await profileStatus(third.access)).toBe(200);
  });

  it('stores only hashes of refresh tokens', async () => {
    const user = await signUp();
    const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.refresh_tokens where token_hash = ${user.refreshToken}`;
    expect(row?.n).toBe(0);
    const [live] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.refresh_tokens where session_id = ${sessionIdOf(user.accessToken)}`;
    expect(live?.n).toBe(1);
  });

  it('the previous token presented again within the 10 s grace succeeds (two tabs refreshing)', async () => {
    const user = await signUp();
    const a = await refreshOk(user.refreshToken);
    const b = await refreshOk(user.refreshToken); // the previous token, at once
    expect(b.refresh).not.toBe(a.refresh);
    expect(await profileStatus(b.access)).toBe(200);
    expect(await profileStatus(a.access)).toBe(200);
    // the session is still live and its newest token rotates normally
    const c = await refreshOk(b.refresh);
    expect(await profileStatus(c.access)).toBe(200);
  });

  it('the grace gives one sibling only: five more presentations of the old token -> one 200, then 401 and the session revoked', async () => {
    const user = await signUp();
    const first = await refreshOk(user.refreshToken);
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push((await refresh(user.refreshToken)).status);
    expect(answers).toEqual([200, 401, 401, 401, 401]);
    // the second reuse was treated as theft: every token of the session is dead
    expect(await profileStatus(first.access)).toBe(401);
    expect401(await refresh(first.refresh));
    const [live] = await testDb()<{ revoked: boolean; reason: string | null }[]>`
      select revoked_at is not null as revoked, revoked_reason as reason from private.sessions where id = ${
      sessionIdOf(user.accessToken)
    }`;
    expect(live).toEqual({ revoked: true, reason: 'refresh_token_reuse' });
  });

  it('five concurrent reuses of the old token inside the grace: at most one sibling is issued', async () => {
    const user = await signUp();
    await refreshOk(user.refreshToken);
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh(user.refreshToken)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(4);
    // whatever the order, no more than two tokens of the session were ever live at once, and
    // after a second reuse none is
    for (const r of ok) expect(await profileStatus(tokensOf(r).access)).toBe(401);
  });

  it('9 s after rotation the previous token is still within the grace', async () => {
    const user = await signUp();
    const a = await refreshOk(user.refreshToken);
    await ageRotations(user.accessToken, 9);
    const b = await refreshOk(user.refreshToken);
    expect(await profileStatus(b.access)).toBe(200);
    expect(await profileStatus(a.access)).toBe(200);
  });

  it('the previous token after the grace (11 s) -> 401 and the whole session is revoked', async () => {
    const user = await signUp();
    const latest = await refreshOk(user.refreshToken);
    expect(await profileStatus(latest.access)).toBe(200);
    await ageRotations(user.accessToken, 11);

    expect401(await refresh(user.refreshToken), 'refresh_token_reused');
    expect(await profileStatus(latest.access)).toBe(401);
    expect401(await get(profileGet, { token: user.accessToken }), 'unauthenticated');
    expect401(await refresh(latest.refresh), 'refresh_token_invalid');
    const [session] = await testDb()<{ revoked: boolean; reason: string | null }[]>`
      select revoked_at is not null as revoked, revoked_reason as reason from private.sessions where id = ${
      sessionIdOf(latest.access)
    }`;
    expect(session).toEqual({ revoked: true, reason: 'refresh_token_reuse' });
  });

  it('an older rotated token (not the immediately previous one) -> 401 and the session is revoked, even within 10 s', async () => {
    const user = await signUp();
    const second = await refreshOk(user.refreshToken);
    const third = await refreshOk(second.refresh);
    expect401(await refresh(user.refreshToken));
    expect(await profileStatus(third.access)).toBe(401);
    expect401(await refresh(third.refresh));
    expect401(await refresh(second.refresh));
  });

  it('reuse on one session leaves the other sessions of the user alive', async () => {
    const user = await signUp();
    const other = await loginAgain(user);
    await refreshOk(user.refreshToken);
    await ageRotations(user.accessToken, 11);
    expect401(await refresh(user.refreshToken));
    expect(await profileStatus(other.access)).toBe(200);
    const otherNext = await refreshOk(other.refresh);
    expect(await profileStatus(otherNext.access)).toBe(200);
  });

  it('an unknown token -> 401', async () => {
    expect401(await refresh('this-token-was-never-issued-0123456789abcdef'), 'refresh_token_invalid');
    expect401(await refresh('x'), 'refresh_token_invalid');
  });

  it('a token of an expired session -> 401', async () => {
    const user = await signUp();
    await testDb()`update private.sessions set expires_at = now() - interval '1 second' where id = ${
      sessionIdOf(user.accessToken)
    }`;
    expect401(await refresh(user.refreshToken));
    expect(await profileStatus(user.accessToken)).toBe(401);
  });

  it('refresh tokens live 30 days from their issue: a refresh near the end of the session extends it', async () => {
    const user = await signUp();
    const sessionId = sessionIdOf(user.accessToken);
    // the session was opened almost 30 days ago: one minute left
    await testDb()`update private.sessions set created_at = now() - interval '30 days' + interval '1 minute',
                                               expires_at = now() + interval '1 minute'
                   where id = ${sessionId}`;
    const next = await refreshOk(user.refreshToken);
    // two minutes pass
    await testDb()`update private.sessions set created_at = created_at - interval '2 minutes',
                                               expires_at = expires_at - interval '2 minutes'
                   where id = ${sessionId}`;
    await testDb()`update private.refresh_tokens set created_at = created_at - interval '2 minutes',
                                                     rotated_at = rotated_at - interval '2 minutes'
                   where session_id = ${sessionId}`;
    // the refresh token issued two minutes ago is nowhere near its 30 days
    expect(await profileStatus(next.access)).toBe(200);
    const after = await refreshOk(next.refresh);
    expect(await profileStatus(after.access)).toBe(200);
  });

  it('validation: missing, empty, non-string, too long or extra fields -> 400 naming the field', async () => {
    // @ts-expect-error a body missing its field, on purpose
    const missing = await post(authRefresh, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      success: false,
      status: 400,
      code: 'validation_failed',
      error: 'Validation failed',
      details: [{ field: 'refresh_token', message: 'is required' }],
    });
    const empty = await post(authRefresh, { refresh_token: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual([{ field: 'refresh_token', message: 'must not be empty' }]);
    for (const refresh_token of [123, null, ['a'], 'x'.repeat(513)]) {
      // @ts-expect-error tokens of every wrong kind, on purpose
      const bad = await post(authRefresh, { refresh_token });
      expect(bad.status, JSON.stringify(refresh_token)).toBe(400);
      expect(fieldsOf(bad)).toEqual(['refresh_token']);
    }
    // @ts-expect-error an unknown field, on purpose
    const extra = await post(authRefresh, { refresh_token: 'abc', access_token: 'abc' });
    expect(extra.status).toBe(400);
    expect(fieldsOf(extra)).toEqual(['access_token']);
    // @ts-expect-error no body at all, on purpose
    const noBody = await post(authRefresh, undefined, { method: 'POST' });
    expect(noBody.status).toBe(400);
    expect(fieldsOf(noBody)).toEqual(['refresh_token']);
  });

  it('two concurrent refreshes with the same token both succeed and both tabs keep a working token', async () => {
    const user = await signUp();
    const results = await Promise.all(Array.from({ length: 2 }, () => refresh(user.refreshToken)));
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const tokens = results.map(tokensOf);
    expect(new Set(tokens.map((t) => t.refresh)).size).toBe(2);
    const [live] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.refresh_tokens
       where session_id = ${sessionIdOf(user.accessToken)} and rotated_at is null`;
    expect(live?.n).toBe(2);
    for (const t of tokens) expect(await profileStatus(t.access)).toBe(200);
    // long after the grace, each tab refreshes its own token normally
    await ageRotations(user.accessToken, 60);
    for (const t of tokens) {
      const next = await refresh(t.refresh);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(await profileStatus(tokensOf(next).access)).toBe(200);
    }
  });
});

describe('auth-logout', () => {
  it('needs a bearer token (401 without, or with a bad one)', async () => {
    expect401(await post(authLogout, undefined, { method: 'POST' }), 'unauthenticated');
    expect(
      (await post(authLogout, undefined, { method: 'POST' })).body.error,
    ).toBe('Missing bearer token');
    expect401(await post(authLogout, undefined, { method: 'POST', token: 'not-a-jwt' }), 'unauthenticated');
    expect401(
      await post(authLogout, undefined, { method: 'POST', headers: { Authorization: 'Basic dXNlcjpwYXNz' } }),
    );
  });

  it('ends the current session: its access token and refresh token get 401', async () => {
    const user = await signUp();
    const res = await post(authLogout, undefined, { method: 'POST', token: user.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ success: true, status: 200, data: { logged_out: true } });
    expect401(await get(profileGet, { token: user.accessToken }));
    expect401(await refresh(user.refreshToken));
    // logging out again with the dead token is refused too
    expect401(await post(authLogout, undefined, { method: 'POST', token: user.accessToken }));
    const [session] = await testDb()<{ reason: string | null }[]>`
      select revoked_reason as reason from private.sessions where id = ${sessionIdOf(user.accessToken)}`;
    expect(session?.reason).toBe('logout');
  });

  it('also ends tokens obtained by refresh in that session', async () => {
    const user = await signUp();
    const next = await refreshOk(user.refreshToken);
    expect((await post(authLogout, undefined, { method: 'POST', token: user.accessToken })).status).toBe(200);
    expect(await profileStatus(next.access)).toBe(401);
    expect401(await refresh(next.refresh));
    expect401(await refresh(user.refreshToken));
  });

  it('another session of the same user keeps working', async () => {
    const user = await signUp();
    const second = await loginAgain(user);
    expect(sessionIdOf(second.access)).not.toBe(sessionIdOf(user.accessToken));
    expect((await post(authLogout, undefined, { method: 'POST', token: second.access })).status).toBe(200);
    expect(await profileStatus(second.access)).toBe(401);
    expect401(await refresh(second.refresh));
    // the signup session is untouched
    expect(await profileStatus(user.accessToken)).toBe(200);
    const next = await refreshOk(user.refreshToken);
    expect(await profileStatus(next.access)).toBe(200);
  });

  it('takes no body fields', async () => {
    const user = await signUp();
    // @ts-expect-error auth-logout takes no body fields: one, on purpose
    const res = await post(authLogout, { everywhere: true }, { token: user.accessToken });
    expect(res.status).toBe(400);
    expect(await profileStatus(user.accessToken)).toBe(200);
  });
});
