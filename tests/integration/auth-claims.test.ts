// The service's own access tokens carry the claims PostgREST reads, so row-level security works
// with them as with Supabase Auth's (docs/decisions.md, "Authentication: our own tokens"): a real
// token from a login through auth-verify, decoded, holds `role`, `aud`, `sub` and `exp`; set as
// `request.jwt.claims` (what PostgREST sets, and shared/core/db.ts here) for role `authenticated`
// in a transaction, `auth.uid()` is its user and an RLS-protected table shows that user's rows
// only; another user's claims show theirs.
import { describe, expect, it } from 'vitest';
import { expectOk, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { signUp, type TestUser } from '../support/users.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';

/** A login through auth-send-otp and auth-verify (context login): its access token. */
async function login(u: TestUser): Promise<string> {
  // the sign-up code was sent a moment ago: past the resend gap (60 s) by moving that send back
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${u.phone}`}`;
  expectOk(await post(authSendOtp, { phone: u.phone, context: 'login' }));
  const otp_code = await lastOtp(u.phone);
  const session = expectOk(
    await post(authVerify, { phone: u.phone, context: 'login', otp_code, password: u.password }),
  );
  return (session as { session: { access_token: string } }).session.access_token;
}

/** The claims of a JWT, read without verifying it (the test checks what it carries). */
function claimsOf(token: string): Record<string, unknown> {
  const [, payload] = token.split('.');
  return JSON.parse(Buffer.from(payload as string, 'base64url').toString('utf8'));
}

interface Seen {
  uid: string;
  role: string;
  profiles: string[];
  notifications: number;
  foreign: number;
}

/**
 * What Postgres shows a request carrying `claims`, as PostgREST would run it: role authenticated and
 * request.jwt.claims, nothing else (no legacy request.jwt.claim.sub); rolled back.
 */
async function seenWith(claims: Record<string, unknown>, userId: string): Promise<Seen> {
  let seen: Seen | undefined;
  const rollback = new Error('rollback');
  await testDb()
    .begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true),
                      set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
      const [who] = await tx<{ uid: string; role: string }[]>`select auth.uid()::text as uid, auth.role() as role`;
      const profiles = await tx<{ id: string }[]>`select id from public.profiles`;
      const [n] = await tx<{ mine: number; foreign: number }[]>`
        select count(*)::int as mine, count(*) filter (where user_id <> ${userId})::int as foreign
          from public.notifications`;
      seen = {
        uid: who!.uid,
        role: who!.role,
        profiles: profiles.map((p) => p.id),
        notifications: n!.mine,
        foreign: n!.foreign,
      };
      throw rollback;
    })
    .catch((err) => {
      if (err !== rollback) throw err;
    });
  return seen!;
}

describe('auth-verify', () => {
  it("a login's access token carries role, aud, sub and exp, and under RLS auth.uid() is its user, who reads only their own rows", async () => {
    // tier 1 records a check, which notifies each of them: a row of their own in public.notifications
    const [a, b] = await Promise.all([signUp({ tier: 1 }), signUp({ tier: 1 })]);
    const [total] = await testDb()<{ n: number }[]>`select count(*)::int as n from public.profiles`;
    expect(total!.n).toBeGreaterThan(1);

    for (const [u, other] of [[a, b], [b, a]] as const) {
      const claims = claimsOf(await login(u));
      expect(claims).toMatchObject({ role: 'authenticated', aud: 'authenticated', sub: u.id });
      expect(typeof claims.exp).toBe('number');
      const now = Math.floor(Date.now() / 1000);
      expect(claims.exp as number).toBeGreaterThan(now);
      expect((claims.exp as number) - (claims.iat as number)).toBe(3600);

      const seen = await seenWith(claims, u.id);
      expect(seen.uid).toBe(u.id);
      expect(seen.role).toBe('authenticated');
      expect(seen.profiles).toEqual([u.id]);
      expect(seen.profiles).not.toContain(other.id);
      expect(seen.notifications).toBeGreaterThan(0);
      expect(seen.foreign).toBe(0);
    }
  });
});
