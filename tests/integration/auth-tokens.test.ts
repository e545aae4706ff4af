// Access-token verification on a protected endpoint (profile-get), with tokens forged by the test
// using the server's own secret: a valid forgery for a live session is accepted (so the refusals
// below are meaningful), and every way of bending the token is refused with a 401 envelope.
import { describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { type ApiResult, get, post } from '../support/api.ts';
import { TEST_JWT_SECRET } from '../support/stack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';

const ISSUER = 'escrow-service';
const AUDIENCE = 'authenticated';
const enc = new TextEncoder();

interface ForgeOptions {
  secret?: string;
  alg?: string;
  issuer?: string | null;
  audience?: string | null;
  exp?: number | null;
  iat?: number | null;
  /** Claims merged over the user's real ones; undefined values remove the claim. */
  claims?: Record<string, unknown>;
}

/** The claims the server would put in a token for this user and session. */
function baseClaims(user: TestUser): Record<string, unknown> {
  const real = decodeJwt(user.accessToken);
  return { role: 'authenticated', session_id: real.session_id, phone: user.phone, sub: user.id };
}

async function forge(user: TestUser, opts: ForgeOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { ...baseClaims(user), ...(opts.claims ?? {}) };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
  const jwt = new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' });
  if (opts.issuer !== null) jwt.setIssuer(opts.issuer ?? ISSUER);
  if (opts.audience !== null) jwt.setAudience(opts.audience ?? AUDIENCE);
  if (opts.iat !== null) jwt.setIssuedAt(opts.iat ?? now);
  if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now + 3600);
  return jwt.sign(enc.encode(opts.secret ?? TEST_JWT_SECRET));
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const fromB64url = (s: string) => Buffer.from(s, 'base64url').toString('utf8');

function expect401(res: ApiResult, label = ''): void {
  expect(res.status, `${label} ${JSON.stringify(res.body)}`).toBe(401);
  expect(Object.keys(res.body).sort(), label).toEqual(['code', 'error', 'status', 'success']);
  expect(res.body.code, label).toBe('unauthenticated');
  expect(res.body.success, label).toBe(false);
  expect(res.body.status, label).toBe(401);
  expect(typeof res.body.error, label).toBe('string');
  expect(res.body.error.length, label).toBeGreaterThan(0);
}

const profile = (token: string) => get(profileGet, { token });

describe('access tokens on a protected endpoint', () => {
  it('the real token has the documented claims and header', async () => {
    const user = await signUp();
    expect(decodeProtectedHeader(user.accessToken)).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(user.accessToken);
    expect(claims).toMatchObject({
      sub: user.id,
      role: 'authenticated',
      aud: AUDIENCE,
      iss: ISSUER,
      phone: user.phone,
    });
    expect(claims.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
  });

  it('a forged token with the right secret for a real live session works (the test is meaningful)', async () => {
    const user = await signUp();
    const res = await profile(await forge(user));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.id).toBe(user.id);
  });

  it('a tampered payload (sub changed, signature kept) -> 401', async () => {
    const user = await signUp();
    const other = await signUp();
    const [header, payload, signature] = user.accessToken.split('.') as [string, string, string];
    const claims = JSON.parse(fromB64url(payload));
    claims.sub = other.id;
    expect401(await profile(`${header}.${b64url(JSON.stringify(claims))}.${signature}`), 'sub changed');
    // any change, even only the expiry, breaks the signature
    const later = { ...JSON.parse(fromB64url(payload)), exp: claims.exp + 3600 };
    expect401(await profile(`${header}.${b64url(JSON.stringify(later))}.${signature}`), 'exp changed');
    // signature cut off or truncated
    expect401(await profile(`${header}.${payload}.`), 'no signature');
    expect401(await profile(`${header}.${payload}.${signature.slice(0, -4)}`), 'short signature');
    // the original is fine
    expect((await profile(user.accessToken)).status).toBe(200);
  });

  it('a well-signed token naming another user with my session -> 401 (session belongs to its user)', async () => {
    const user = await signUp();
    const other = await signUp();
    expect401(await profile(await forge(user, { claims: { sub: other.id, phone: other.phone } })));
  });

  it('signed with another secret -> 401', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { secret: 'another-secret-0123456789abcdefghijklmnopqrstuv' })));
    expect401(await profile(await forge(user, { secret: `${TEST_JWT_SECRET}x` })));
  });

  it('another HMAC algorithm with the right secret (HS512, HS384) -> 401: the algorithm is pinned', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { alg: 'HS512' })), 'HS512');
    expect401(await profile(await forge(user, { alg: 'HS384' })), 'HS384');
  });

  it('expired (exp in the past) -> 401', async () => {
    const user = await signUp();
    const now = Math.floor(Date.now() / 1000);
    expect401(await profile(await forge(user, { iat: now - 7200, exp: now - 60 })), 'an hour ago');
    expect401(await profile(await forge(user, { iat: now - 3605, exp: now - 5 })), 'just now');
  });

  it('missing exp or iat -> 401', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { exp: null })), 'no exp');
    expect401(await profile(await forge(user, { iat: null })), 'no iat');
  });

  it('alg none -> 401', async () => {
    const user = await signUp();
    const now = Math.floor(Date.now() / 1000);
    const unsigned = new UnsecuredJWT(baseClaims(user) as JWTPayload)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .encode();
    expect(decodeProtectedHeader(unsigned).alg).toBe('none');
    expect401(await profile(unsigned), 'none, empty signature');
    // none in the header with the real signature attached
    const [, payload] = unsigned.split('.') as [string, string];
    const realSignature = user.accessToken.split('.')[2] as string;
    expect401(
      await profile(`${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${payload}.${realSignature}`),
      'none + sig',
    );
  });

  it('wrong or missing issuer -> 401', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { issuer: 'someone-else' })), 'other issuer');
    expect401(await profile(await forge(user, { issuer: null })), 'no issuer');
  });

  it('wrong or missing audience -> 401', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { audience: 'anon' })), 'anon');
    expect401(await profile(await forge(user, { audience: 'service_role' })), 'service_role');
    expect401(await profile(await forge(user, { audience: null })), 'no audience');
  });

  it('missing or malformed session_id -> 401', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { claims: { session_id: undefined } })), 'missing');
    expect401(await profile(await forge(user, { claims: { session_id: 'not-a-uuid' } })), 'not a uuid');
    expect401(await profile(await forge(user, { claims: { session_id: 42 } })), 'a number');
    expect401(await profile(await forge(user, { claims: { session_id: crypto.randomUUID() } })), 'no such session');
  });

  it('wrong role, missing sub or phone -> 401', async () => {
    const user = await signUp();
    expect401(await profile(await forge(user, { claims: { role: 'service_role' } })), 'service_role');
    expect401(await profile(await forge(user, { claims: { role: undefined } })), 'no role');
    expect401(await profile(await forge(user, { claims: { sub: undefined } })), 'no sub');
    expect401(await profile(await forge(user, { claims: { sub: 'not-a-uuid' } })), 'bad sub');
    expect401(await profile(await forge(user, { claims: { phone: undefined } })), 'no phone');
  });

  it('session_id of a revoked session -> 401, even freshly signed', async () => {
    const user = await signUp();
    const fresh = await forge(user);
    expect((await profile(fresh)).status).toBe(200);
    const out = await post(authLogout, undefined, { method: 'POST', token: user.accessToken });
    expect(out.status).toBe(200);
    expect401(await profile(fresh), 'forged before logout');
    expect401(await profile(await forge(user)), 'forged after logout');
    expect401(await profile(user.accessToken), 'the real one');
  });

  it("'Basic x', no header, an empty or malformed bearer -> 401", async () => {
    const user = await signUp();
    const cases: [string, Record<string, string>][] = [
      ['no header', {}],
      ['Basic', { Authorization: 'Basic x' }],
      ['Basic with the token', { Authorization: `Basic ${user.accessToken}` }],
      ['bare token', { Authorization: user.accessToken }],
      ['Bearer only', { Authorization: 'Bearer' }],
      ['Bearer and spaces', { Authorization: 'Bearer   ' }],
      ['two tokens', { Authorization: `Bearer ${user.accessToken} ${user.accessToken}` }],
      ['garbage', { Authorization: 'Bearer not.a.jwt' }],
      ['refresh token as bearer', { Authorization: `Bearer ${user.refreshToken}` }],
    ];
    for (const [label, headers] of cases) expect401(await get(profileGet, { headers }), label);
    // and the real token in the same form works
    expect((await get(profileGet, { headers: { Authorization: `Bearer ${user.accessToken}` } })).status).toBe(200);
  });
});
