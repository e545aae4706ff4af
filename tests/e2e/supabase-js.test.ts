// The end-to-end story as a client app lives it: @supabase/supabase-js createClient(...)
// .functions.invoke(...) against the running Deno functions server. Sign up, read the profile,
// log out, log in, refresh, forget and reset the password, log in with the new one. The answers are
// typed by the typed client's generated types (clients/typescript: Data<'auth-signup'>, ErrorEnvelope),
// and each one, success or refusal, is checked against docs/api/openapi.json and the endpoint's
// response schema.
import { createClient, FunctionsHttpError, type SupabaseClient } from '@supabase/supabase-js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Data, ErrorEnvelope, OperationName } from '../../clients/typescript/index.ts';
import { baseUrl } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { checkSuccessBody } from '../support/responses.ts';
import { newPhone } from '../support/users.ts';

// ---- helpers -------------------------------------------------------------------------------

type SessionData = Data<'auth-signup'>;

/** The Supabase project URL is the functions base URL without its trailing /functions/v1. */
const supabaseUrl = () => baseUrl().replace(/\/functions\/v1\/?$/, '');

let supabase: SupabaseClient;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

interface InvokeOptions {
  body?: Record<string, unknown>;
  token?: string;
  method?: 'GET' | 'POST' | 'PATCH';
  /** query string for GETs: invoke() takes it as part of the function name */
  query?: Record<string, string>;
}

/** The name invoke() is given: the operation, and its query string if any. */
const target = (name: string, query?: Record<string, string>) =>
  query ? `${name}?${new URLSearchParams(query).toString()}` : name;

/** invoke() that must succeed: returns the envelope's data after checking status and envelope. */
async function ok<N extends OperationName>(name: N, opts: InvokeOptions = {}, status = 200): Promise<Data<N>> {
  const method = opts.method ?? 'POST';
  const { data, error, response } = await supabase.functions.invoke<{ success: true; status: number; data: Data<N> }>(
    target(name, opts.query),
    {
      method,
      ...(opts.body ? { body: opts.body } : {}),
      ...(opts.token ? { headers: bearer(opts.token) } : {}),
    },
  );
  if (error) {
    const detail = error instanceof FunctionsHttpError ? await (error.context as Response).text() : String(error);
    throw new Error(`${name} failed: ${detail}`);
  }
  expect(response?.status, name).toBe(status);
  expect(data).toMatchObject({ success: true, status });
  expect(response?.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  await checkSuccessBody(name, status, data, method);
  return (data as { data: Data<N> }).data;
}

/** invoke() that must fail with a FunctionsHttpError carrying the status and the envelope. */
async function fails(
  name: OperationName,
  opts: InvokeOptions & { headers?: Record<string, string> },
  status: number,
): Promise<{ body: ErrorEnvelope; response: Response }> {
  const method = opts.method ?? 'POST';
  const { data, error } = await supabase.functions.invoke(target(name, opts.query), {
    method,
    ...(opts.body ? { body: opts.body } : {}),
    headers: { ...(opts.headers ?? {}), ...(opts.token ? bearer(opts.token) : {}) },
  });
  expect(data, `${name} should have failed`).toBeNull();
  expect(error).toBeInstanceOf(FunctionsHttpError);
  const response = (error as FunctionsHttpError).context as Response;
  expect(response).toBeInstanceOf(Response);
  expect(response.status, name).toBe(status);
  const body = (await response.json()) as ErrorEnvelope;
  expect(body.success).toBe(false);
  expect(body.status).toBe(status);
  expect(typeof body.error).toBe('string');
  await checkSuccessBody(name, status, body, method);
  return { body, response };
}

/** auth-verify answers a session for a login ({ verified, expires_in } for a sign-up). */
function loginSession(answer: Data<'auth-verify'>): SessionData {
  if (!('session' in answer)) throw new Error(`auth-verify answered no session: ${JSON.stringify(answer)}`);
  return answer;
}

const fieldsOf = (b: ErrorEnvelope) => (b.details ?? []).map((d) => d.field).sort();

/** Moves the per-phone resend gap into the past (as if a minute had gone by); the hourly cap stays. */
async function letAMinutePass(e164: string) {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                  where key = ${`otp:resend:${e164}`}`;
}

const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

/**
 * These tests never open a realtime connection, but supabase-js looks for a WebSocket class when
 * the client is created and Node 20 has none built in: hand it the native one where it exists,
 * otherwise a stand-in that refuses to connect.
 */
class NoRealtime {
  constructor() {
    throw new Error('realtime is not used by these tests');
  }
}

beforeAll(() => {
  supabase = createClient(supabaseUrl(), 'any-string-works-as-the-anon-key', {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ((globalThis as { WebSocket?: unknown }).WebSocket ?? NoRealtime) as never },
  });
});

// ---- the story -----------------------------------------------------------------------------

describe('supabase-js functions.invoke against the local server', () => {
  it('the client points at {supabaseUrl}/functions/v1', () => {
    expect(supabaseUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(`${supabaseUrl()}/functions/v1`).toBe(baseUrl());
  });

  it('sign up, profile, logout, login, refresh, forgot + reset password, login with the new password', async () => {
    const { local, e164 } = newPhone();
    const password = 'first passphrase 1';
    const newPassword = 'second passphrase 2';

    // --- sign up ---
    const sent = await ok('auth-send-otp', {
      body: { phone: local, context: 'signup' },
    });
    expect(sent).toEqual({ sent: true, expires_in: 600, resend_after: 60 });

    const signupCode = await lastOtp(e164);
    const wrong = await fails('auth-verify', {
      body: { phone: local, context: 'signup', otp_code: otherCode(signupCode) },
    }, 409);
    expect(fieldsOf(wrong.body)).toEqual(['otp_code']);
    expect(wrong.body.code).toBe('otp_invalid');

    expect(await ok('auth-verify', { body: { phone: local, context: 'signup', otp_code: signupCode } })).toEqual({
      verified: true,
      expires_in: 1800,
    });

    const invalidSignup = await fails('auth-signup', {
      body: { phone: local, first_name: '', last_name: 'Eze', password: 'short' },
    }, 400);
    expect(fieldsOf(invalidSignup.body)).toEqual(['first_name', 'password']);

    const signedUp = await ok(
      'auth-signup',
      { body: { phone: local, first_name: 'Ifeoma', last_name: 'Eze', password } },
      201,
    );
    expect(signedUp.user.phone).toBe(e164);
    expect(signedUp.session).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const userId = signedUp.user.id;
    let accessToken = signedUp.session.access_token;

    // --- profile with the access token ---
    const profile = await ok('profile-get', { method: 'GET', token: accessToken });
    expect(profile).toMatchObject({
      id: userId,
      first_name: 'Ifeoma',
      last_name: 'Eze',
      phone_number: e164,
      next_of_kin: null,
    });

    const updated = await ok('profile-update', {
      method: 'PATCH',
      token: accessToken,
      body: { bio: 'Sells phones in Computer Village' },
    });
    expect(updated.bio).toBe('Sells phones in Computer Village');
    const phoneChange = await fails('profile-update', {
      method: 'PATCH',
      token: accessToken,
      body: { phone_number: '+2348000000000' },
    }, 400);
    expect(fieldsOf(phoneChange.body)).toEqual(['phone_number']);

    // without the user's token the client only sends its anon key: 401
    await fails('profile-get', { method: 'GET' }, 401);
    const wrongMethod = await fails('profile-get', { method: 'POST', token: accessToken }, 405);
    expect(wrongMethod.response.headers.get('allow')).toBe('GET, OPTIONS');

    // --- log out: the token dies at once ---
    expect(await ok('auth-logout', { token: accessToken })).toEqual({ logged_out: true });
    await fails('profile-get', { method: 'GET', token: accessToken }, 401);
    await fails('auth-refresh', { body: { refresh_token: signedUp.session.refresh_token } }, 401);

    // --- log in (send-otp login + verify login with password) ---
    // the resend gap is per phone: asking again at once is 429 with Retry-After
    const tooSoon = await fails('auth-send-otp', { body: { phone: local, context: 'login' } }, 429);
    expect(Number(tooSoon.response.headers.get('retry-after'))).toBeGreaterThan(0);
    await letAMinutePass(e164);
    expect(await ok('auth-send-otp', { body: { phone: e164, context: 'login' } })).toMatchObject({ sent: true });
    const loginCode = await lastOtp(e164);
    expect(loginCode).not.toBe(signupCode);

    const badPassword = await fails('auth-verify', {
      body: { phone: local, context: 'login', otp_code: loginCode, password: 'not my password' },
    }, 401);
    expect(badPassword.body.details).toBeUndefined();
    const missingPassword = await fails('auth-verify', {
      body: { phone: local, context: 'login', otp_code: loginCode },
    }, 400);
    expect(fieldsOf(missingPassword.body)).toEqual(['password']);

    const loggedIn = loginSession(
      await ok('auth-verify', {
        body: { phone: local, context: 'login', otp_code: loginCode, password },
      }),
    );
    expect(loggedIn.user).toEqual({ id: userId, phone: e164 });
    expect(loggedIn.session.token_type).toBe('bearer');
    accessToken = loggedIn.session.access_token;
    expect((await ok('profile-get', { method: 'GET', token: accessToken })).bio).toBe(
      'Sells phones in Computer Village',
    );
    // the code was single use
    await fails('auth-verify', { body: { phone: local, context: 'login', otp_code: loginCode, password } }, 401);

    // --- refresh ---
    const refreshed = await ok('auth-refresh', {
      body: { refresh_token: loggedIn.session.refresh_token },
    });
    expect(refreshed.user).toEqual({ id: userId, phone: e164 });
    expect(refreshed.session.refresh_token).not.toBe(loggedIn.session.refresh_token);
    expect(refreshed.session.expires_in).toBe(3600);
    accessToken = refreshed.session.access_token;
    expect((await ok('profile-get', { method: 'GET', token: accessToken })).id).toBe(userId);
    const badRefresh = await fails('auth-refresh', { body: { refresh_token: 'made-up-token' } }, 401);
    expect(badRefresh.body.error.length).toBeGreaterThan(0);

    // --- forgot + reset password ---
    await letAMinutePass(e164);
    expect(await ok('auth-forgot-password', { body: { phone: local } })).toMatchObject({ sent: true });
    const resetCode = await lastOtp(e164);
    const mismatch = await fails(
      'auth-reset-password',
      { body: { phone: local, otp_code: resetCode, password: newPassword, confirm_password: `${newPassword}x` } },
      400,
    );
    expect(fieldsOf(mismatch.body)).toEqual(['confirm_password']);
    const wrongReset = await fails(
      'auth-reset-password',
      { body: { phone: local, otp_code: otherCode(resetCode), password: newPassword, confirm_password: newPassword } },
      409,
    );
    expect(fieldsOf(wrongReset.body)).toEqual(['otp_code']);
    expect(wrongReset.body.code).toBe('otp_invalid');
    expect(
      await ok('auth-reset-password', {
        body: { phone: local, otp_code: resetCode, password: newPassword, confirm_password: newPassword },
      }),
    ).toMatchObject({ password_reset: true });

    // every session is revoked: the current access token and refresh token stop working
    await fails('profile-get', { method: 'GET', token: accessToken }, 401);
    await fails('auth-refresh', { body: { refresh_token: refreshed.session.refresh_token } }, 401);

    // --- log in with the new password (the old one no longer works) ---
    await letAMinutePass(e164);
    await ok('auth-send-otp', { body: { phone: local, context: 'login' } });
    const finalCode = await lastOtp(e164);
    await fails('auth-verify', { body: { phone: local, context: 'login', otp_code: finalCode, password } }, 401);
    const final = loginSession(
      await ok('auth-verify', {
        body: { phone: local, context: 'login', otp_code: finalCode, password: newPassword },
      }),
    );
    expect(final.user.id).toBe(userId);
    const finalProfile = await ok('profile-get', { method: 'GET', token: final.session.access_token });
    expect(finalProfile).toMatchObject({ id: userId, phone_number: e164, first_name: 'Ifeoma' });
  });

  it('a forgot-password request for a phone without an account looks the same and sends nothing', async () => {
    const { local, e164 } = newPhone();
    expect(await ok('auth-forgot-password', { body: { phone: local } })).toEqual({ sent: true, expires_in: 600 });
    await expect(lastOtp(e164)).rejects.toThrow(/no OTP SMS/);
  });

  it('a conversation through the client: escrow, messages, the feed with both cursors, the list, read', async () => {
    const signUpClient = async (firstName: string) => {
      const { local, e164 } = newPhone();
      await ok('auth-send-otp', { body: { phone: local, context: 'signup' } });
      await ok('auth-verify', { body: { phone: local, context: 'signup', otp_code: await lastOtp(e164) } });
      const s = await ok('auth-signup', {
        body: { phone: local, first_name: firstName, last_name: 'Eze', password: 'long enough pw' },
      }, 201);
      return { phone: e164, token: s.session.access_token, id: s.user.id };
    };
    const buyer = await signUpClient('Amaka');
    const seller = await signUpClient('Tunde');
    const escrow = await ok('escrow-create', {
      token: buyer.token,
      body: {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Laptop',
        counterparty_phone: seller.phone,
        amount: 150_000,
      },
    }, 201);
    const c = escrow.conversation_id;
    const hello = await ok(
      'message-send',
      { token: seller.token, body: { conversation_id: c, content: 'Hello' } },
      201,
    );
    expect(hello).toMatchObject({ source: 'message', sender_id: seller.id, sender_first_name: 'Tunde' });
    const answer = await ok('message-send', { token: buyer.token, body: { conversation_id: c, content: 'Hi!' } }, 201);
    const feed = await ok('message-feed', { method: 'GET', token: buyer.token, query: { conversation_id: c } });
    expect(feed.map((i) => i.source)).toEqual(['notification', 'message', 'message']);
    expect(feed.slice(1).map((i) => i.content)).toEqual(['Hello', 'Hi!']);
    const older = await ok('message-feed', {
      method: 'GET',
      token: buyer.token,
      query: { conversation_id: c, before: answer.created_at, limit: '1' },
    });
    expect(older.map((i) => i.id)).toEqual([hello.id]);
    const newer = await ok('message-feed', {
      method: 'GET',
      token: seller.token,
      query: { conversation_id: c, after: hello.created_at },
    });
    expect(newer.map((i) => i.id)).toEqual([answer.id]);
    const [listed] = await ok('conversation-list', { method: 'GET', token: buyer.token });
    expect(listed).toMatchObject({ conversation_id: c, last_item: answer, unread_count: 1 });
    expect(await ok('conversation-read', { token: buyer.token, body: { conversation_id: c } })).toEqual({ updated: 1 });
    const stranger = await signUpClient('Str');
    await fails('message-feed', { method: 'GET', token: stranger.token, query: { conversation_id: c } }, 404);
    await fails('message-send', { token: stranger.token, body: { conversation_id: c, content: 'hi' } }, 404);
  });

  it('next of kin through the client', async () => {
    const { local, e164 } = newPhone();
    await ok('auth-send-otp', { body: { phone: local, context: 'signup' } });
    await ok('auth-verify', { body: { phone: local, context: 'signup', otp_code: await lastOtp(e164) } });
    const s = await ok('auth-signup', {
      body: { phone: local, first_name: 'Musa', last_name: 'Bello', password: 'long enough pw' },
    }, 201);
    const kin = {
      first_name: 'Hauwa',
      last_name: 'Bello',
      phone: '08031112222',
      address: '5 Ahmadu Bello Way, Kaduna',
      relationship: 'Mother',
    };
    const created = await ok('profile-nok-update', { method: 'PATCH', token: s.session.access_token, body: kin });
    expect(created).toMatchObject(kin);
    const missing = await fails('profile-nok-update', {
      method: 'PATCH',
      token: s.session.access_token,
      body: { first_name: 'Only' },
    }, 400);
    expect(fieldsOf(missing.body)).toEqual(['address', 'last_name', 'phone', 'relationship']);
    expect((await ok('profile-get', { method: 'GET', token: s.session.access_token })).next_of_kin).toEqual(created);
  });
});
