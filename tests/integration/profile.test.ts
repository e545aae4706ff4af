// profile-get, profile-update and profile-nok-update through the real HTTP server.
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult, baseUrl, type BodyOf, call, fieldsOf, get, patch, post, postRaw } from '../support/api.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { testDb } from '../support/db.ts';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const PROFILE_KEYS = [
  'address',
  'avatar',
  'bio',
  'created_at',
  'first_name',
  'id',
  'last_name',
  'marital_status',
  'next_of_kin',
  'phone_number',
  'updated_at',
  'username',
];
const NOK_KEYS = ['address', 'created_at', 'first_name', 'id', 'last_name', 'phone', 'relationship'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A username nobody else in this run has: prefix + 8 random letters/digits (<= 30 chars). */
const uniqueName = (prefix = 'u_') => `${prefix}${randomBytes(6).toString('base64url').replace(/[^a-zA-Z0-9]/g, 'x')}`;

const profileOf = async (user: TestUser) => {
  const res = await get(profileGet, { token: user.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};

const update = (user: TestUser, body: BodyOf<typeof profileUpdate>) =>
  patch(profileUpdate, body, { token: user.accessToken });
const nok = (user: TestUser, body: BodyOf<typeof profileNokUpdate>) =>
  patch(profileNokUpdate, body, { token: user.accessToken });

/** The error envelope every failure must have; returns the fields named in details. */
function expectError(res: ApiResult, status: number): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.status).toBe(status);
  expect(typeof res.body.error).toBe('string');
  expect(res.body).not.toHaveProperty('data');
  expect(res.headers.get('x-request-id')).toMatch(UUID);
  return fieldsOf(res);
}

function expectOk(res: ApiResult, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  expect(res.body.status).toBe(status);
  return res.body.data;
}

const validNok = () => ({
  first_name: 'Ngozi',
  last_name: 'Okafor',
  phone: '08031234567',
  address: '12 Allen Avenue, Ikeja, Lagos',
  relationship: 'Sister',
});

// ---- profile-get ---------------------------------------------------------------------------

describe('profile-get', () => {
  it('an account whose profile is gone gets 404 profile_not_found (and profile-update too)', async () => {
    const user = await signUp();
    await testDb()`delete from public.profiles where id = ${user.id}`;
    for (const res of [await get(profileGet, { token: user.accessToken }), await update(user, { bio: 'x' })]) {
      expectError(res, 404);
      expect(res.body.code).toBe('profile_not_found');
      expect(res.body.error).toBe('Profile not found');
    }
  });

  it('returns exactly the profile shape of the spec for a new account', async () => {
    const user = await signUp({ first_name: 'Chinedu', last_name: 'Okeke' });
    const res = await get(profileGet, { token: user.accessToken });
    const data = expectOk(res);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'status', 'success']);
    expect(Object.keys(data).sort()).toEqual(PROFILE_KEYS);
    expect(data).toEqual({
      id: user.id,
      first_name: 'Chinedu',
      last_name: 'Okeke',
      username: null,
      phone_number: user.phone,
      address: null,
      marital_status: null,
      bio: null,
      avatar: null,
      next_of_kin: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Math.abs(Date.parse(data.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it("shows only the caller's own profile", async () => {
    const [a, b] = await Promise.all([signUp({ first_name: 'Aisha' }), signUp({ first_name: 'Bola' })]);
    expect((await profileOf(a)).id).toBe(a.id);
    expect((await profileOf(b)).id).toBe(b.id);
    expect((await profileOf(b)).first_name).toBe('Bola');
  });

  it('refuses query parameters', async () => {
    const user = await signUp();
    // @ts-expect-error profile-get takes no query: one, on purpose
    const res = await get(profileGet, { token: user.accessToken, query: { user_id: user.id } });
    expect(expectError(res, 400)).toEqual(['user_id']);
  });
});

// ---- authentication, methods, CORS (all three) --------------------------------------------

describe('profile endpoints: authentication, methods and CORS', () => {
  const endpoints = [
    { name: 'profile-get', method: 'GET', body: undefined },
    { name: 'profile-update', method: 'PATCH', body: { bio: 'hello' } },
    { name: 'profile-nok-update', method: 'PATCH', body: validNok() },
  ] as const;

  let user: TestUser;
  beforeAll(async () => {
    user = await signUp();
  });

  it.each(endpoints)(
    '$name: 401 without a token, with a bad token and with a token from another secret',
    async ({ name, method, body }) => {
      const none = await call(name, { method, body });
      expectError(none, 401);
      const garbage = await call(name, { method, body, token: 'not-a-jwt' });
      expectError(garbage, 401);
      const [h, p] = user.accessToken.split('.');
      const badSignature = await call(name, { method, body, token: `${h}.${p}.c2lnbmF0dXJl` });
      expectError(badSignature, 401);
      // the same claims as the real token, signed with a key that is not the server's
      const claims = JSON.parse(Buffer.from(p as string, 'base64url').toString()) as Record<string, unknown>;
      const otherSecret = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .sign(new TextEncoder().encode('not-the-server-secret-0123456789abcdef'));
      expectError(await call(name, { method, body, token: otherSecret }), 401);
      const basic = await call(name, { method, body, headers: { Authorization: `Basic ${user.accessToken}` } });
      expectError(basic, 401);
    },
  );

  it.each(endpoints)('$name: 401 comes before validation (no token, invalid body)', async ({ name, method }) => {
    if (method === 'GET') {
      expectError(await call(name, { method, query: { junk: 1 } }), 401);
    } else {
      expectError(await call(name, { method, body: { phone_number: '+2348000000000', nonsense: true } }), 401);
    }
  });

  it.each(endpoints)('$name: 405 with Allow for a wrong method', async ({ name, method }) => {
    const wrong = method === 'GET' ? ['POST', 'PATCH', 'PUT', 'DELETE'] : ['GET', 'POST', 'PUT', 'DELETE'];
    for (const m of wrong) {
      const res = await call(name, { method: m, token: user.accessToken });
      expectError(res, 405);
      expect(res.headers.get('allow'), `${name} ${m}`).toBe(`${method}, OPTIONS`);
    }
  });

  it.each(endpoints)('$name: OPTIONS preflight is 204 with CORS headers, no token needed', async ({ name, method }) => {
    const res = await fetch(`${baseUrl()}/${name}`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example.ng',
        'Access-Control-Request-Method': method,
        'Access-Control-Request-Headers': 'authorization, content-type, x-client-info, apikey',
      },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBeTruthy();
    expect(res.headers.get('access-control-allow-methods')).toContain(method);
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['authorization', 'content-type', 'x-client-info', 'apikey']) expect(allowed).toContain(h);
  });

  it.each(endpoints)('$name: CORS headers on ordinary answers too', async ({ name, method, body }) => {
    const res = await call(name, { method, body, token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeTruthy();
    const denied = await call(name, { method, body });
    expect(denied.headers.get('access-control-allow-origin')).toBeTruthy();
  });

  it('a token of a logged-out session is refused by all three', async () => {
    const u = await signUp();
    expect((await post(authLogout, undefined, { token: u.accessToken })).status).toBe(200);
    for (const { name, method, body } of endpoints) {
      expectError(await call(name, { method, body, token: u.accessToken }), 401);
    }
  });
});

// ---- profile-update ------------------------------------------------------------------------

describe('profile-update', () => {
  describe('bounds of every field', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await signUp();
    });

    const cases: { field: string; value: unknown; ok: boolean }[] = [
      { field: 'first_name', value: 'A', ok: true },
      { field: 'first_name', value: 'F'.repeat(100), ok: true },
      { field: 'first_name', value: '', ok: false },
      { field: 'first_name', value: '   ', ok: false },
      { field: 'first_name', value: 'F'.repeat(101), ok: false },
      { field: 'first_name', value: null, ok: false },
      { field: 'first_name', value: 42, ok: false },
      { field: 'last_name', value: 'B', ok: true },
      { field: 'last_name', value: 'L'.repeat(100), ok: true },
      { field: 'last_name', value: '', ok: false },
      { field: 'last_name', value: 'L'.repeat(101), ok: false },
      { field: 'username', value: `z${uniqueName('_').padEnd(29, '9').slice(0, 29)}`, ok: true },
      { field: 'username', value: 'ab', ok: false },
      { field: 'username', value: 'u'.repeat(31), ok: false },
      { field: 'username', value: 'bad-name!', ok: false },
      { field: 'username', value: 'has space', ok: false },
      { field: 'username', value: 'émile_x', ok: false },
      { field: 'username', value: 'abc\n', ok: false },
      { field: 'address', value: 'A'.repeat(500), ok: true },
      { field: 'address', value: 'A'.repeat(501), ok: false },
      { field: 'bio', value: 'b'.repeat(300), ok: true },
      { field: 'bio', value: 'b'.repeat(301), ok: false },
      { field: 'marital_status', value: 'single', ok: true },
      { field: 'marital_status', value: 'married', ok: true },
      { field: 'marital_status', value: 'divorced', ok: true },
      { field: 'marital_status', value: 'widowed', ok: true },
      { field: 'marital_status', value: 'complicated', ok: false },
      { field: 'marital_status', value: 'Single', ok: false },
      { field: 'marital_status', value: '', ok: false },
      { field: 'avatar_url', value: 'not a url', ok: false },
      { field: 'avatar_url', value: 'javascript:alert(1)', ok: false },
      { field: 'avatar_url', value: '/relative/path.png', ok: false },
      { field: 'avatar_url', value: '', ok: false },
      { field: 'storage_path', value: '', ok: false },
      { field: 'storage_path', value: 7, ok: false },
    ];

    const labelled = cases.map((c) => ({
      ...c,
      label: typeof c.value === 'string' && c.value.length > 12
        ? `${c.value.length} characters`
        : JSON.stringify(c.value),
    }));

    it.each(labelled)('$field = $label -> ok: $ok', async ({ field, value, ok }) => {
      const before = await profileOf(user);
      const res = await update(user, { [field]: value });
      if (ok) {
        const data = expectOk(res);
        expect(Object.keys(data).sort()).toEqual(PROFILE_KEYS);
        expect(data[field]).toBe(value);
        expect(((await profileOf(user)) as Record<string, unknown>)[field]).toBe(value);
      } else {
        expect(expectError(res, 400)).toEqual([field]);
        expect(await profileOf(user)).toEqual(before);
      }
    });

    it('username 3 and 30 characters are accepted exactly as sent', async () => {
      const thirty = `U${randomBytes(30).toString('hex')}`.slice(0, 30);
      expect(thirty).toHaveLength(30);
      expect(expectOk(await update(user, { username: thirty })).username).toBe(thirty);
      // a three-character name nobody else in this run uses (only this test sets 3-character names)
      const three = `Q${randomBytes(1).toString('hex')}`;
      expect(three).toHaveLength(3);
      expect(expectOk(await update(user, { username: three })).username).toBe(three);
      expect((await profileOf(user)).username).toBe(three);
    });

    it('avatar stays null until avatar_url is set, then is {avatar_url, storage_path, status}', async () => {
      const u = await signUp();
      expect((await profileOf(u)).avatar).toBeNull();
      // a storage path alone does not make an avatar
      expectOk(await update(u, { storage_path: 'avatars/pending.png' }));
      expect((await profileOf(u)).avatar).toBeNull();

      const url = 'https://cdn.example.ng/avatars/me.png';
      const data = expectOk(await update(u, { avatar_url: url, storage_path: `avatars/${u.id}/me.png` }));
      expect(data.avatar).toEqual({
        avatar_url: url,
        storage_path: `avatars/${u.id}/me.png`,
        status: expect.any(String),
      });
      expect(Object.keys(data.avatar).sort()).toEqual(['avatar_url', 'status', 'storage_path']);
      expect(data.avatar.status.length).toBeGreaterThan(0);
      expect((await profileOf(u)).avatar).toEqual(data.avatar);

      // changing only the URL keeps the storage path
      const url2 = 'https://cdn.example.ng/avatars/me-2.png';
      const again = expectOk(await update(u, { avatar_url: url2 }));
      expect(again.avatar).toEqual({
        avatar_url: url2,
        storage_path: `avatars/${u.id}/me.png`,
        status: data.avatar.status,
      });
    });

    it("a storage path of the spec's shape is accepted", async () => {
      const data = expectOk(await update(user, { storage_path: `avatars/${user.id}/photo 1.jpg` }));
      expect(data.id).toBe(user.id);
    });
  });

  describe('what changes and what is refused', () => {
    it('only the fields sent change; updated_at moves, created_at does not', async () => {
      const u = await signUp({ first_name: 'Tunde', last_name: 'Bakare' });
      const username = uniqueName('tb_');
      const first = expectOk(
        await update(u, { username, address: '3 Marina, Lagos', marital_status: 'married', bio: 'Trader in Balogun' }),
      );
      expect(first).toMatchObject({
        first_name: 'Tunde',
        last_name: 'Bakare',
        username,
        address: '3 Marina, Lagos',
        marital_status: 'married',
        bio: 'Trader in Balogun',
        phone_number: u.phone,
      });
      await new Promise((r) => setTimeout(r, 20));
      const second = expectOk(await update(u, { bio: 'Now selling phones' }));
      expect(second).toEqual({ ...first, bio: 'Now selling phones', updated_at: expect.stringMatching(ISO) });
      expect(Date.parse(second.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));
      expect(second.created_at).toBe(first.created_at);
      expect(await profileOf(u)).toEqual(second);

      const third = expectOk(await update(u, { first_name: 'Babatunde' }));
      expect(third).toEqual({ ...second, first_name: 'Babatunde', updated_at: expect.stringMatching(ISO) });
    });

    it.each(['phone_number', 'phone'])('%s in the body is 400 naming it, and nothing changes', async (field) => {
      const u = await signUp({ first_name: 'Kemi' });
      const before = await profileOf(u);
      const alone = await update(u, { [field]: '+2348099999999' });
      expect(expectError(alone, 400)).toEqual([field]);
      const withOthers = await update(u, { first_name: 'Changed', [field]: '08099999999' });
      expect(expectError(withOthers, 400)).toEqual([field]);
      const same = await update(u, { [field]: u.phone });
      expect(expectError(same, 400)).toEqual([field]);
      const nulled = await update(u, { [field]: null });
      expect(expectError(nulled, 400)).toEqual([field]);
      const after = await profileOf(u);
      expect(after).toEqual(before);
      expect(after.phone_number).toBe(u.phone);
      expect(after.first_name).toBe('Kemi');
    });

    it('an unknown field is 400 naming it, and nothing changes', async () => {
      const u = await signUp();
      const before = await profileOf(u);
      // @ts-expect-error an unknown field, on purpose
      expect(expectError(await update(u, { nickname: 'Ace' }), 400)).toEqual(['nickname']);
      // @ts-expect-error a field a client may not set, on purpose
      expect(expectError(await update(u, { bio: 'ok', id: '11111111-2222-4333-8444-555555555555' }), 400)).toEqual([
        'id',
      ]);
      // @ts-expect-error a field a client may not set, on purpose
      expect(expectError(await update(u, { bio: 'ok', avatar: { avatar_url: 'https://x.ng/a.png' } }), 400)).toEqual([
        'avatar',
      ]);
      // @ts-expect-error a field a client may not set, on purpose
      expect(expectError(await update(u, { bio: 'ok', created_at: '2020-01-01T00:00:00Z' }), 400)).toEqual([
        'created_at',
      ]);
      expect(await profileOf(u)).toEqual(before);
    });

    it('an empty body is 400', async () => {
      const u = await signUp();
      const before = await profileOf(u);
      const empty = await update(u, {});
      expect(expectError(empty, 400)).toEqual(['body']);
      // the schema's minProperties: a malformed request like any other
      expect(empty.body.code).toBe('validation_failed');
      expectError(await call(profileUpdate, { method: 'PATCH', token: u.accessToken }), 400);
      expectError(await postRaw(profileUpdate, '{"bio":', { method: 'PATCH', token: u.accessToken }), 400);
      // @ts-expect-error an array for a body, on purpose
      expectError(await update(u, []), 400);
      // @ts-expect-error null for a body, on purpose
      expectError(await update(u, null), 400);
      expect(await profileOf(u)).toEqual(before);
    });

    it('several problems are reported together, one per field', async () => {
      const u = await signUp();
      const res = await update(u, {
        first_name: '',
        username: 'x',
        bio: 'b'.repeat(301),
        // @ts-expect-error a marital status the schema refuses, on purpose
        marital_status: 'other',
        extra: 1,
      });
      expect(expectError(res, 400)).toEqual(['bio', 'extra', 'first_name', 'marital_status', 'username']);
      for (const d of res.body.details) expect(Object.keys(d).sort()).toEqual(['field', 'message']);
    });

    it('a username taken by another user, in any letter case, is 409 on username', async () => {
      const [a, b] = await Promise.all([signUp({ first_name: 'Ada' }), signUp({ first_name: 'Bayo' })]);
      const taken = uniqueName('Ada_');
      expect(expectOk(await update(a, { username: taken })).username).toBe(taken);
      const bBefore = await profileOf(b);

      for (const attempt of [taken, taken.toLowerCase(), taken.toUpperCase()]) {
        const res = await update(b, { username: attempt, bio: 'should not be saved' });
        expect(expectError(res, 409), attempt).toEqual(['username']);
        expect(res.body.code).toBe('username_taken');
        expect(res.body.error).toBe('That username is taken');
      }
      expect(await profileOf(b)).toEqual(bBefore);
      // the owner may change the case of their own username
      expect(expectOk(await update(a, { username: taken.toUpperCase() })).username).toBe(taken.toUpperCase());
      // once A moves on, B can take it
      expectOk(await update(a, { username: uniqueName('Ada2_') }));
      expect(expectOk(await update(b, { username: taken.toLowerCase() })).username).toBe(taken.toLowerCase());
    });

    it('two users racing for one username: one gets it, the other a 409 (never a 500)', async () => {
      const [a, b] = await Promise.all([signUp(), signUp()]);
      const name = uniqueName('race_');
      const results = await Promise.all([update(a, { username: name }), update(b, { username: name.toUpperCase() })]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const loser = results.find((r) => r.status === 409) as ApiResult;
      expect(expectError(loser, 409)).toEqual(['username']);
    });

    it('setting the username one already has is fine', async () => {
      const u = await signUp();
      const name = uniqueName('same_');
      expectOk(await update(u, { username: name }));
      expect(expectOk(await update(u, { username: name })).username).toBe(name);
    });

    it("a user's update never touches another user's profile", async () => {
      const [a, b] = await Promise.all([signUp(), signUp()]);
      const bBefore = await profileOf(b);
      expectOk(await update(a, { bio: 'only mine', first_name: 'Mine' }));
      expect(await profileOf(b)).toEqual(bBefore);
    });
  });
});

// ---- profile-nok-update --------------------------------------------------------------------

describe('profile-nok-update', () => {
  it('the first call creates, the second updates the same record; profile-get shows it', async () => {
    const u = await signUp();
    const res = await nok(u, validNok());
    const created = expectOk(res);
    expect(Object.keys(created).sort()).toEqual(NOK_KEYS);
    expect(created).toEqual({ ...validNok(), id: expect.stringMatching(UUID), created_at: expect.stringMatching(ISO) });
    expect((await profileOf(u)).next_of_kin).toEqual(created);

    const changed = {
      first_name: 'Emeka',
      last_name: 'Okafor',
      phone: '+2348012345678',
      address: '4 Aba Road, Port Harcourt',
      relationship: 'Brother',
    };
    const updated = expectOk(await nok(u, changed));
    expect(updated).toEqual({ ...changed, id: created.id, created_at: created.created_at });
    const profile = await profileOf(u);
    expect(profile.next_of_kin).toEqual(updated);
    expect(Object.keys(profile).sort()).toEqual(PROFILE_KEYS);
  });

  it.each(['first_name', 'last_name', 'phone', 'address', 'relationship'])(
    '%s is required (400 naming it)',
    async (field) => {
      const u = await signUp();
      const body: Record<string, unknown> = validNok();
      delete body[field];
      // @ts-expect-error a body missing a required field, on purpose
      const res = await nok(u, body);
      expect(expectError(res, 400)).toEqual([field]);
      expect(res.body.details[0]!.message).toBe('is required');
      expect((await profileOf(u)).next_of_kin).toBeNull();
    },
  );

  it('an empty body names all five fields', async () => {
    const u = await signUp();
    // @ts-expect-error an empty body, on purpose
    expect(expectError(await nok(u, {}), 400)).toEqual(['address', 'first_name', 'last_name', 'phone', 'relationship']);
    expect(expectError(await call(profileNokUpdate, { method: 'PATCH', token: u.accessToken }), 400)).toEqual([
      'address',
      'first_name',
      'last_name',
      'phone',
      'relationship',
    ]);
  });

  const bounds: { field: string; value: string; ok: boolean }[] = [
    { field: 'first_name', value: 'N', ok: true },
    { field: 'first_name', value: 'N'.repeat(100), ok: true },
    { field: 'first_name', value: '', ok: false },
    { field: 'first_name', value: 'N'.repeat(101), ok: false },
    { field: 'last_name', value: 'O', ok: true },
    { field: 'last_name', value: 'O'.repeat(100), ok: true },
    { field: 'last_name', value: '', ok: false },
    { field: 'last_name', value: 'O'.repeat(101), ok: false },
    { field: 'phone', value: '+234 803 123 4567 89', ok: true }, // 20 characters
    { field: 'phone', value: '+234 803 123 4567 890', ok: false }, // 21 characters
    { field: 'phone', value: '2'.repeat(21), ok: false },
    { field: 'address', value: 'a'.repeat(500), ok: true },
    { field: 'address', value: 'a'.repeat(501), ok: false },
    { field: 'relationship', value: 'r'.repeat(100), ok: true },
    { field: 'relationship', value: 'r'.repeat(101), ok: false },
  ];

  it.each(bounds.map((b) => ({ ...b, length: b.value.length })))(
    '$field of length $length -> ok: $ok',
    async ({ field, value, ok }) => {
      const u = await signUp();
      const res = await nok(u, { ...validNok(), [field]: value });
      if (ok) {
        const data = expectOk(res);
        expect(data[field]).toBe(value);
        expect(((await profileOf(u)).next_of_kin as Record<string, unknown>)[field]).toBe(value);
      } else {
        expect(expectError(res, 400)).toEqual([field]);
        expect((await profileOf(u)).next_of_kin).toBeNull();
      }
    },
  );

  it('concurrent first calls still make exactly one record', async () => {
    const u = await signUp();
    const results = await Promise.all(
      ['One', 'Two', 'Three', 'Four', 'Five'].map((first_name) => nok(u, { ...validNok(), first_name })),
    );
    for (const r of results) expectOk(r);
    const ids = new Set(results.map((r) => r.body.data.id));
    expect(ids.size).toBe(1);
    const stored = (await profileOf(u)).next_of_kin;
    expect(ids.has(stored!.id)).toBe(true);
    expect(['One', 'Two', 'Three', 'Four', 'Five']).toContain(stored!.first_name);
  });

  it('values are trimmed of surrounding spaces, and a blank value counts as missing', async () => {
    const u = await signUp();
    const data = expectOk(await nok(u, { ...validNok(), first_name: '  Ngozi  ', relationship: ' Sister ' }));
    expect(data.first_name).toBe('Ngozi');
    expect(data.relationship).toBe('Sister');
    expect(expectError(await nok(u, { ...validNok(), relationship: '   ' }), 400)).toEqual(['relationship']);
    expect(expectError(await nok(u, { ...validNok(), address: '' }), 400)).toEqual(['address']);
  });

  it('a failed update leaves the existing next of kin as it was', async () => {
    const u = await signUp();
    const created = expectOk(await nok(u, validNok()));
    expectError(await nok(u, { ...validNok(), relationship: 'r'.repeat(101) }), 400);
    // @ts-expect-error a body missing required fields, on purpose
    expectError(await nok(u, { first_name: 'Only' }), 400);
    expect((await profileOf(u)).next_of_kin).toEqual(created);
  });

  it('unknown fields are refused (user_id cannot be chosen)', async () => {
    const [u, other] = await Promise.all([signUp(), signUp()]);
    // @ts-expect-error a field a client may not set, on purpose
    expect(expectError(await nok(u, { ...validNok(), user_id: other.id }), 400)).toEqual(['user_id']);
    // @ts-expect-error a field a client may not set, on purpose
    expect(expectError(await nok(u, { ...validNok(), id: '11111111-2222-4333-8444-555555555555' }), 400)).toEqual([
      'id',
    ]);
    expect((await profileOf(other)).next_of_kin).toBeNull();
  });

  it("each user's next of kin is their own", async () => {
    const [a, b] = await Promise.all([signUp(), signUp()]);
    const na = expectOk(await nok(a, validNok()));
    const nb = expectOk(await nok(b, { ...validNok(), first_name: 'Other' }));
    expect(na.id).not.toBe(nb.id);
    expect((await profileOf(a)).next_of_kin).toEqual(na);
    expect((await profileOf(b)).next_of_kin).toEqual(nb);
  });
});
