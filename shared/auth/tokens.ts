// Access tokens (JWT HS256 via jose, algorithm, issuer and audience pinned) and opaque refresh
// tokens (random, stored as SHA-256 hashes).
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { getConfig } from '../config.ts';
import { base64url, randomBytes, sha256Hex } from './crypto.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
export const AUDIENCE = 'authenticated';

const enc = new TextEncoder();
const key = () => enc.encode(getConfig().AUTH_JWT_SECRET);

export interface AccessClaims {
  sub: string;
  role: 'authenticated';
  session_id: string;
  phone: string;
  aud: string;
  iss: string;
  iat: number;
  exp: number;
}

export async function signAccessToken(user: { id: string; phone: string }, sessionId: string): Promise<string> {
  return await new SignJWT({ role: 'authenticated', session_id: sessionId, phone: user.phone })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.id)
    .setAudience(AUDIENCE)
    .setIssuer(getConfig().AUTH_JWT_ISSUER)
    .setIssuedAt()
    .setExpirationTime(`${ACCESS_TOKEN_TTL_SECONDS}s`)
    .sign(key());
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Verified claims, or null for any invalid, expired, tampered or foreign token. */
export async function verifyAccessToken(token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key(), {
      algorithms: ['HS256'],
      issuer: getConfig().AUTH_JWT_ISSUER,
      audience: AUDIENCE,
      requiredClaims: ['sub', 'exp', 'iat', 'session_id'],
    });
    if (payload.role !== 'authenticated') return null;
    if (typeof payload.sub !== 'string' || !UUID.test(payload.sub)) return null;
    if (typeof payload.session_id !== 'string' || !UUID.test(payload.session_id)) return null;
    if (typeof payload.phone !== 'string') return null;
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
): Promise<SessionBody> {
  return {
    user: { id: user.id, phone: user.phone },
    session: {
      access_token: await signAccessToken(user, sessionId),
      refresh_token: refreshToken,
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      token_type: 'bearer',
    },
  };
}
