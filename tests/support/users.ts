// Builds real accounts through the real endpoints.
import { expect } from 'vitest';
import { post } from './api.ts';
import { lastOtp } from './db.ts';
import { raiseTier } from './kyc.ts';

import { randomInt } from 'node:crypto';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import authVerify from '../../supabase/functions/auth-verify/handler.ts';

/** A fresh random phone number (0 + 10 digits) and its E.164 form. */
export function newPhone(): { local: string; e164: string } {
  const ten = `9${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
  return { local: `0${ten}`, e164: `+234${ten}` };
}

export interface TestUser {
  id: string;
  phone: string;
  password: string;
  accessToken: string;
  refreshToken: string;
}

export async function verifyPhone(phone: string): Promise<void> {
  const sent = await post(authSendOtp, { phone, context: 'signup' });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  const code = await lastOtp(phone.startsWith('+') ? phone : `+234${phone.slice(1)}`);
  const verified = await post(authVerify, { phone, context: 'signup', otp_code: code });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
}

/**
 * A new account through auth-send-otp, auth-verify and auth-signup. `tier`: the KYC tier its checks
 * are then recorded up to (tests/support/kyc.ts), for suites that move money (tier 0 moves none: the identity floor);
 * 0 (nothing recorded) unless given. `phone` (E.164): a phone of the test's choosing, e.g. one a merchant escrow
 * named (its placeholder is claimed).
 */
export async function signUp(
  opts: { phone?: string; first_name?: string; last_name?: string; password?: string; tier?: number } = {},
): Promise<TestUser> {
  const e164 = opts.phone ?? newPhone().e164;
  const password = opts.password ?? 'a sound passphrase';
  await verifyPhone(e164);
  const res = await post(authSignup, {
    phone: e164,
    first_name: opts.first_name ?? 'Ada',
    last_name: opts.last_name ?? 'Obi',
    password,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  if (opts.tier) expect(await raiseTier(res.body.data.user.id, opts.tier)).toBe(opts.tier);
  return {
    id: res.body.data.user.id,
    phone: e164,
    password,
    accessToken: res.body.data.session.access_token,
    refreshToken: res.body.data.session.refresh_token,
  };
}
