// The account flows of docs/auth.md ("The flows at a glance"). Each is called by exactly one function.
import type { AuthUser } from './session.ts';
import { getConfig } from '../core/config.ts';
import { asService, isPgError } from '../core/db.ts';
import {
  ACCOUNT_EXISTS,
  LOGIN_FAILED,
  OTP_INVALID,
  PHONE_NOT_VERIFIED,
  REFRESH_TOKEN_INVALID,
  REFRESH_TOKEN_REUSED,
  SIGNUP_IN_PROGRESS,
} from './refusals.ts';
import { errorMessage, log } from '../core/log.ts';
import { UNAUTHENTICATED } from '../core/refusals.ts';
import {
  type ForgotPasswordResponse,
  type LogoutResponse,
  type OtpSentResponse,
  type PhoneVerifiedResponse,
  type ResetPasswordResponse,
} from './schema.ts';
import { checkOtp, codeSms, hasLiveOtp, issueOtp, type OtpContext, type OtpSms } from './otp.ts';
import { burnPasswordCheck, hashPassword, verifyPassword } from './password.ts';
import {
  hashRefreshToken,
  newRefreshToken,
  REFRESH_TOKEN_TTL_SECONDS,
  type SessionBody,
  sessionBody,
} from './tokens.ts';

/**
 * The account of a phone. A placeholder (a merchant escrow's party who has not signed up: no
 * password) is no account: it cannot log in or reset a password, and signing up claims it.
 */
async function accountExists(phone: string): Promise<{ id: string; password_hash: string } | undefined> {
  const [row] = await asService((tx) =>
    tx<{ id: string; password_hash: string }[]>`
    select id, password_hash from private.users where phone = ${phone} and password_hash is not null`
  );
  return row;
}

/**
 * Sends a code. Same answer, and the same database work, whether or not the phone has an account:
 * only the queued message differs (its text, or withheld), and it is sent after the answer.
 */
export async function authSendOtp(
  phone: string,
  context: 'signup' | 'login',
  clientIp: string,
): Promise<OtpSentResponse> {
  const existing = await accountExists(phone);
  const sms: OtpSms = context === 'signup'
    // the owner of a registered phone learns it already has an account (a notice, no code)
    ? existing ? { kind: 'account_exists', withheld: null } : codeSms()
    : codeSms(existing ? null : 'no_account');
  await issueOtp(phone, context, clientIp, sms);
  const c = getConfig();
  return { sent: true, expires_in: c.OTP_TTL_SECONDS, resend_after: c.OTP_RESEND_SECONDS };
}

/**
 * auth-send-otp with the context account_delete: a code for account-delete, sent to the signed-in
 * caller's own phone (the account's, from the database), under the same limits as any code.
 */
export async function authSendDeleteCode(user: AuthUser, clientIp: string): Promise<OtpSentResponse> {
  const [row] = await asService((tx) =>
    tx<{ phone: string }[]>`select phone from private.users where id = ${user.id} and deleted_at is null`
  );
  if (!row) throw UNAUTHENTICATED.error({ reason: 'ended' });
  await issueOtp(row.phone, 'account_delete', clientIp, codeSms());
  const c = getConfig();
  return { sent: true, expires_in: c.OTP_TTL_SECONDS, resend_after: c.OTP_RESEND_SECONDS };
}

/** auth-verify: a sign-up code verifies the phone; a login code with the password opens a session. */
export function authVerify(
  body: { phone: string; otp_code: string; context: 'signup' | 'login'; password?: string },
): Promise<PhoneVerifiedResponse | SessionBody> {
  return body.context === 'signup'
    ? verifySignupCode(body.phone, body.otp_code)
    : login(body.phone, body.otp_code, body.password as string);
}

async function verifySignupCode(phone: string, code: string): Promise<PhoneVerifiedResponse> {
  const ttl = getConfig().PHONE_VERIFICATION_TTL_SECONDS;
  const outcome = await asService(async (tx) => {
    const result = await checkOtp(tx, phone, 'signup', code);
    if (result === 'ok') {
      await tx`insert into private.phone_verifications (phone, verified_at, expires_at)
               values (${phone}, now(), now() + make_interval(secs => ${ttl}))
               on conflict (phone) do update set verified_at = excluded.verified_at, expires_at = excluded.expires_at`;
    }
    return result;
  });
  if (outcome !== 'ok') throw OTP_INVALID.error({});
  return { verified: true, expires_in: ttl };
}

async function login(phone: string, code: string, password: string): Promise<SessionBody> {
  const c = getConfig();
  // No live code: refuse before spending a password hash on the request.
  if (!(await hasLiveOtp(phone, 'login'))) throw LOGIN_FAILED.error({});
  const user = await accountExists(phone);
  const passwordOk = user
    ? await verifyPassword(password, user.password_hash)
    : await burnPasswordCheck(password, c.PASSWORD_PBKDF2_ITERATIONS);
  const refresh = newRefreshToken();
  const refreshHash = await hashRefreshToken(refresh);
  const sessionId = await asService(async (tx) => {
    const outcome = await checkOtp(tx, phone, 'login', code, passwordOk);
    if (outcome !== 'ok' || !user) return null;
    const [row] = await tx<{ id: string }[]>`
      select private.create_session(${user.id}, ${refreshHash}, ${REFRESH_TOKEN_TTL_SECONDS}) as id`;
    return row?.id ?? null;
  });
  if (!sessionId || !user) throw LOGIN_FAILED.error({});
  return sessionBody({ id: user.id, phone }, sessionId, refresh);
}

/** How long one sign-up holds its verified phone while its password is hashed. */
const SIGNUP_HOLD_SECONDS = 30;

function phoneNotVerified() {
  return PHONE_NOT_VERIFIED.error({ minutes: Math.round(getConfig().PHONE_VERIFICATION_TTL_SECONDS / 60) });
}

export async function authSignup(
  input: { phone: string; first_name: string; last_name: string; password: string },
): Promise<SessionBody> {
  // No password hash for a phone that has not been verified (docs/auth.md, "Enumeration resistance"): the check comes first,
  // and holds the verification so that parallel sign-ups for one phone hash one at a time.
  const [claim] = await asService((tx) =>
    tx<{ outcome: 'claimed' | 'busy' | 'unverified' }[]>`
    select private.claim_phone_verification(${input.phone}, ${SIGNUP_HOLD_SECONDS}) as outcome`
  );
  if (claim?.outcome === 'busy') {
    throw SIGNUP_IN_PROGRESS.error({});
  }
  if (claim?.outcome !== 'claimed') throw phoneNotVerified();
  const passwordHash = await hashPassword(input.password, getConfig().PASSWORD_PBKDF2_ITERATIONS);
  const refresh = newRefreshToken();
  const refreshHash = await hashRefreshToken(refresh);
  let row: { user_id: string; session_id: string } | undefined;
  try {
    [row] = await asService((tx) =>
      tx<{ user_id: string; session_id: string }[]>`
      select * from private.create_account(${input.phone}, ${passwordHash}, ${input.first_name},
                                           ${input.last_name}, ${refreshHash}, ${REFRESH_TOKEN_TTL_SECONDS})`
    );
  } catch (err) {
    // the sign-up did not happen: the phone's verification is free again for the next try
    await asService((tx) =>
      tx`update private.phone_verifications set claimed_until = null where phone = ${input.phone}`
    ).catch((freeErr) => {
      // the claim then lapses by itself (claimed_until); a retry before that is refused as in flight
      log.warn('signup.claim_release_failed', { error: errorMessage(freeErr) });
    });
    if (isPgError(err, '23505')) {
      throw ACCOUNT_EXISTS.error({});
    }
    throw err;
  }
  if (!row) throw phoneNotVerified();
  return sessionBody({ id: row.user_id, phone: input.phone }, row.session_id, refresh);
}

export async function authRefresh(token: string): Promise<SessionBody> {
  const c = getConfig();
  const next = newRefreshToken();
  const [oldHash, newHash] = await Promise.all([hashRefreshToken(token), hashRefreshToken(next)]);
  const [row] = await asService((tx) =>
    tx<{ outcome: string; user_id: string; session_id: string; phone: string; lineage: string | null }[]>`
    select * from private.rotate_refresh_token(${oldHash}, ${newHash},
                                               ${c.REFRESH_REUSE_GRACE_SECONDS}, ${REFRESH_TOKEN_TTL_SECONDS})`
  );
  if (row?.outcome === 'reuse') {
    throw REFRESH_TOKEN_REUSED.error({});
  }
  if (!row || (row.outcome !== 'ok' && row.outcome !== 'grace')) throw REFRESH_TOKEN_INVALID.error({});
  return sessionBody({ id: row.user_id, phone: row.phone }, row.session_id, next, row.lineage ?? undefined);
}

export async function authLogout(user: AuthUser): Promise<LogoutResponse> {
  await asService((tx) => tx`select private.end_session(${user.sessionId}, 'logout')`);
  return { logged_out: true };
}

export async function authForgotPassword(phone: string, clientIp: string): Promise<ForgotPasswordResponse> {
  const existing = await accountExists(phone);
  await issueOtp(phone, 'reset', clientIp, codeSms(existing ? null : 'no_account'));
  return { sent: true, expires_in: getConfig().OTP_TTL_SECONDS };
}

export async function authResetPassword(phone: string, code: string, password: string): Promise<ResetPasswordResponse> {
  if (!(await hasLiveOtp(phone, 'reset'))) throw OTP_INVALID.error({});
  const hash = await hashPassword(password, getConfig().PASSWORD_PBKDF2_ITERATIONS);
  const done = await asService(async (tx) => {
    const outcome = await checkOtp(tx, phone, 'reset' satisfies OtpContext, code);
    if (outcome !== 'ok') return false;
    const [row] = await tx<{ id: string | null }[]>`select private.reset_password(${phone}, ${hash}) as id`;
    return !!row?.id;
  });
  if (!done) throw OTP_INVALID.error({});
  return { password_reset: true };
}
