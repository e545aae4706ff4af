// Access tokens (JWT HS256 via jose, algorithm, issuer and audience pinned) and opaque refresh
// tokens (random, stored as SHA-256 hashes).
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { getConfig } from '../core/config.ts';
import { base64url, randomBytes, sha256Hex } from '../core/crypto.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
export const AUDIENCE = 'authenticated';

const enc = new TextEncoder();
/**
 * The HMAC key, imported once per secret: jose would otherwise import the raw bytes again on every
 * signature and verification, a Web Crypto call per request.
 */
let imported: { secret: string; key: Promise<CryptoKey> } | undefined;
function key(): Promise<CryptoKey> {
  const secret = getConfig().AUTH_JWT_SECRET;
  if (imported?.secret !== secret) {
    const hmac = { name: 'HMAC', hash: 'SHA-256' };
    const key = crypto.subtle.importKey('raw', enc.encode(secret), hmac, false, ['sign', 'verify']);
    imported = { secret, key };
    key.catch(() => {
      if (imported?.key === key) imported = undefined; // a failed import is tried again, not kept
    });
  }
  return imported.key;
}

export interface AccessClaims {
  sub: string;
  role: 'authenticated';
  session_id: string;
  /**
   * The line of refresh-token rotations the token was issued on (a grace-window sibling starts a
   * new one); a second-factor pass is bound to it. Absent: the session's first line, the session id.
   */
  lineage?: string;
  phone: string;
  aud: string;
  iss: string;
  iat: number;
  exp: number;
}

export async function signAccessToken(
  user: { id: string; phone: string },
  sessionId: string,
  lineage?: string,
): Promise<string> {
  const claims: Record<string, string> = { role: 'authenticated', session_id: sessionId, phone: user.phone };
  if (lineage && lineage !== sessionId) claims.lineage = lineage;
  return await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.id)
    .setAudience(AUDIENCE)
    .setIssuer(getConfig().AUTH_JWT_ISSUER)
    .setIssuedAt()
    .setExpirationTime(`${ACCESS_TOKEN_TTL_SECONDS}s`)
    .sign(await key());
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Tokens whose signature and claims were verified, by their exact text, until they expire: a
 * client sends the same token with every request for an hour, and Web Crypto's HMAC runs off the
 * JavaScript thread (a hand-off per call, a large share of a read's CPU). A hit still checks the
 * expiry against the clock; a token differing in one byte is a miss and verified in full. Whether
 * the session is live is never cached (shared/core/request-session.ts). Bounded: the oldest entry goes
 * first when full.
 */
const verified = new Map<string, { claims: AccessClaims; secret: string; issuer: string }>();
const VERIFIED_MAX = 10_000;

/** Verified claims, or null for any invalid, expired, tampered or foreign token. */
export async function verifyAccessToken(token: string): Promise<AccessClaims | null> {
  const { AUTH_JWT_SECRET: secret, AUTH_JWT_ISSUER: issuer } = getConfig();
  const known = verified.get(token);
  if (known) {
    const fresh = known.claims.exp > Date.now() / 1000 && known.secret === secret && known.issuer === issuer;
    if (fresh) return known.claims;
    verified.delete(token);
  }
  const claims = await verifySignedToken(token);
  if (claims) {
    if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
    verified.set(token, { claims: Object.freeze(claims), secret, issuer });
  }
  return claims;
}

async function verifySignedToken(token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, await key(), {
      algorithms: ['HS256'],
      issuer: getConfig().AUTH_JWT_ISSUER,
      audience: AUDIENCE,
      requiredClaims: ['sub', 'exp', 'iat', 'session_id'],
    });
    if (payload.role !== 'authenticated') return null;
    if (typeof payload.sub !== 'string' || !UUID.test(payload.sub)) return null;
    if (typeof payload.session_id !== 'string' || !UUID.test(payload.session_id)) return null;
    if (typeof payload.phone !== 'string') return null;
    if (payload.lineage !== undefined && (typeof payload.lineage !== 'string' || !UUID.test(payload.lineage))) {
      return null;
    }
    return payload as unknown as AccessClaims;
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
}

export function newRefreshToken(): string {
  return base64url(randomBytes(32));
}

export const hashRefreshToken = (token: string) => sha256Hex(`refresh:${token}`);

export interface SessionBody {
  user: { id: string; phone: string };
  session: { access_token: string; refresh_token: string; expires_in: number; token_type: 'bearer' };
}

export async function sessionBody(
  user: { id: string; phone: string },
  sessionId: string,
  refreshToken: string,
  lineage?: string,
): Promise<SessionBody> {
  return {
    user: { id: user.id, phone: user.phone },
    session: {
      access_token: await signAccessToken(user, sessionId, lineage),
      refresh_token: refreshToken,
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      token_type: 'bearer',
    },
  };
}
