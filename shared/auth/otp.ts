// One-time codes: 6 digits from a CSPRNG, stored as an HMAC (keyed with a secret derived from
// AUTH_JWT_SECRET), bound to phone and context, valid OTP_TTL_SECONDS, single use, burnt after
// OTP_MAX_ATTEMPTS wrong tries. Sending is rate limited per phone (resend gap, hourly cap) and
// per client address, in Postgres so the limits hold across instances and restarts.
import { getConfig } from '../config.ts';
import { asService, type Tx } from '../db.ts';
import { HttpError, tooManyRequests } from '../http.ts';
import { SmsError, smsSender } from '../sms.ts';
import { log } from '../log.ts';
import { hmacHex, safeEqual } from './crypto.ts';

export type OtpContext = 'signup' | 'login' | 'reset';

export function generateOtp(): string {
  // rejection sampling keeps every code equally likely
  const limit = Math.floor(0xffffffff / 1_000_000) * 1_000_000;
  const buf = new Uint32Array(1);
  for (;;) {
    crypto.getRandomValues(buf);
    const v = buf[0] as number;
    if (v < limit) return String(v % 1_000_000).padStart(6, '0');
  }
}

export function hashOtp(phone: string, context: OtpContext, code: string): Promise<string> {
  return hmacHex('SHA-256', `otp:${getConfig().AUTH_JWT_SECRET}`, `${context}:${phone}:${code}`);
}

const MESSAGES: Record<OtpContext, (code: string, minutes: number) => string> = {
  signup: (c, m) => `Your Escrow sign-up code is ${c}. It expires in ${m} minutes. Never share it.`,
  login: (c, m) => `Your Escrow login code is ${c}. It expires in ${m} minutes. Never share it.`,
  reset: (c, m) => `Your Escrow password reset code is ${c}. It expires in ${m} minutes. Never share it.`,
};

/**
 * Issues a code for (phone, context), replacing any earlier live one. `deliver` false still
 * spends the rate limit and stores a code, so a phone without an account looks the same from
 * outside (status, body and timing) as one with an account.
 */
export async function issueOtp(phone: string, context: OtpContext, clientIp: string, deliver: boolean): Promise<void> {
  const c = getConfig();
  const code = generateOtp();
  const codeHash = await hashOtp(phone, context, code);
  const rules = [
    { key: `otp:resend:${phone}`, limit: 1, window_seconds: c.OTP_RESEND_SECONDS },
    { key: `otp:hour:${phone}`, limit: c.OTP_MAX_PER_HOUR, window_seconds: 3600 },
    { key: `otp:ip:${clientIp}`, limit: c.OTP_IP_MAX_PER_HOUR, window_seconds: 3600 },
  ].filter((r) => r.window_seconds > 0);

  const wait = await asService(async (tx) => {
    const [row] = await tx`select private.rate_limit_take(${tx.json(rules)}) as wait`;
    const waitSeconds = Number(row?.wait ?? 0);
    if (waitSeconds > 0) return waitSeconds;
    await tx`update private.otps set consumed_at = now()
             where phone = ${phone} and context = ${context} and consumed_at is null`;
    await tx`insert into private.otps (phone, context, code_hash, expires_at)
             values (${phone}, ${context}, ${codeHash}, now() + make_interval(secs => ${c.OTP_TTL_SECONDS}))`;
    return 0;
  });
  if (wait > 0) throw tooManyRequests(wait, 'Too many codes requested, try again later');
  if (deliver) await sendOrExplain(phone, MESSAGES[context](code, Math.round(c.OTP_TTL_SECONDS / 60)));
}

/** Sends an SMS; a provider failure is a 503 the client can act on, never a bare 500. */
export async function sendOrExplain(phone: string, body: string): Promise<void> {
  try {
    await smsSender().send(phone, body);
  } catch (err) {
    if (!(err instanceof SmsError)) throw err;
    log.error('sms.send_failed', { error: err.message });
    throw new HttpError(503, 'The SMS could not be sent just now; try again in a minute');
  }
}

export type OtpOutcome = 'ok' | 'wrong' | 'invalid';

/**
 * Checks a code against the live OTP of (phone, context) inside the caller's transaction.
 * `accept` lets the caller veto a correct code (login: the password was wrong), in which case
 * the try counts as a failure. Comparison is constant-time; the bookkeeping is one SQL function.
 */
export async function checkOtp(
  tx: Tx,
  phone: string,
  context: OtpContext,
  code: string,
  accept = true,
): Promise<OtpOutcome> {
  const [otp] = await tx<{ id: string; code_hash: string }[]>`
    select id, code_hash from private.otps
     where phone = ${phone} and context = ${context} and consumed_at is null and expires_at > now()
     order by created_at desc limit 1`;
  if (!otp) return 'invalid';
  const matches = safeEqual(otp.code_hash, await hashOtp(phone, context, code)) && accept;
  const [row] = await tx<{ outcome: OtpOutcome }[]>`
    select private.otp_record_attempt(${otp.id}, ${matches}, ${getConfig().OTP_MAX_ATTEMPTS}) as outcome`;
  return row?.outcome ?? 'invalid';
}

/**
 * Whether (phone, context) has a live code at all: a cheap check that lets login and password
 * reset refuse before any slow password hashing. It says nothing about accounts, since a code is
 * stored for every phone that asks, with or without one.
 */
export async function hasLiveOtp(phone: string, context: OtpContext): Promise<boolean> {
  const rows = await asService((tx) => tx`
    select 1 from private.otps
     where phone = ${phone} and context = ${context} and consumed_at is null and expires_at > now()
     limit 1`);
  return rows.length > 0;
}
