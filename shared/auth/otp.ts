// One-time codes: 6 digits from a CSPRNG, stored as an HMAC (keyed with a secret derived from
// AUTH_JWT_SECRET), bound to phone and context, valid OTP_TTL_SECONDS, single use, burnt after
// OTP_MAX_ATTEMPTS wrong tries. Sending is rate limited per phone (resend gap, hourly cap) and
// per client address, in Postgres so the limits hold across instances and restarts. The SMS is
// queued with the code and sent after the answer (shared/core/background.ts); its text is written when
// it is queued (shared/messages/texts.ts), so the code is kept in the outbox row's body only, and the
// row's message records the kind and the context without it.
import { getConfig } from '../core/config.ts';
import { asService, type Tx } from '../core/db.ts';
import { afterResponse } from '../core/background.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import { RATE_LIMITED } from '../core/refusals.ts';
import type { OtpContext } from './enums.ts';
import { renderSms } from '../messages/texts.ts';
import { dispatchQueuedSms } from '../messages/sms-outbox.ts';
import { hmacHex, safeEqual } from '../core/crypto.ts';

export type { OtpContext };

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

function hashOtp(phone: string, context: OtpContext, code: string): Promise<string> {
  return hmacHex('SHA-256', `otp:${getConfig().AUTH_JWT_SECRET}`, `${context}:${phone}:${code}`);
}

/** Which SMS an issued code sends, and whether it goes out. */
export interface OtpSms {
  /** otp_code: the code's own message for the context; account_exists: a notice with no code. */
  kind: 'otp_code' | 'account_exists';
  /** Why it is recorded but not sent (no_account), or null to send it. */
  withheld: 'no_account' | null;
}

/** The code's own message. */
export const codeSms = (withheld: OtpSms['withheld'] = null): OtpSms => ({ kind: 'otp_code', withheld });

/**
 * Issues a code for (phone, context), replacing any earlier live one, and queues its SMS, in one
 * transaction. Every path runs the same statements (rate limits, code, queued SMS): a phone without
 * an account gets its row marked withheld instead of no row, so the answer's status, body and
 * database work are the same either way. The provider is called after the answer is sent.
 */
export async function issueOtp(phone: string, context: OtpContext, clientIp: string, sms: OtpSms): Promise<void> {
  const c = getConfig();
  const code = generateOtp();
  const codeHash = await hashOtp(phone, context, code);
  const minutes = Math.round(c.OTP_TTL_SECONDS / 60);
  const body = renderSms(sms.kind === 'otp_code' ? { kind: 'otp_code', context, code, minutes } : { kind: sms.kind });
  // what the row records besides its text: never the code
  const message = sms.kind === 'otp_code' ? { kind: sms.kind, context, minutes } : { kind: sms.kind };
  const rules = [
    { key: `otp:resend:${phone}`, limit: 1, window_seconds: c.OTP_RESEND_SECONDS },
    { key: `otp:hour:${phone}`, limit: c.OTP_MAX_PER_HOUR, window_seconds: 3600 },
    { key: `otp:ip:${clientIp}`, limit: c.OTP_IP_MAX_PER_HOUR, window_seconds: 3600 },
  ].filter((r) => r.window_seconds > 0);

  const outcome = await asService(async (tx) => {
    const [row] = await tx`select private.rate_limit_take(${tx.json(rules)}) as wait`;
    const waitSeconds = Number(row?.wait ?? 0);
    if (waitSeconds > 0) return { wait: waitSeconds, smsId: null };
    await tx`update private.otps set consumed_at = now()
             where phone = ${phone} and context = ${context} and consumed_at is null`;
    await tx`insert into private.otps (phone, context, code_hash, expires_at)
             values (${phone}, ${context}, ${codeHash}, now() + make_interval(secs => ${c.OTP_TTL_SECONDS}))`;
    const [queued] = await tx<{ id: number }[]>`
      insert into private.sms_outbox (phone, message, body, sent_at, withheld, expires_at)
      values (${phone}, ${tx.json(message)}, ${body}, null, ${sms.withheld},
              now() + make_interval(secs => ${c.OTP_TTL_SECONDS}))
      returning id`;
    return { wait: 0, smsId: sms.withheld === null ? Number(queued?.id) : null };
  });
  if (outcome.wait > 0) {
    // the wait in words as well as in Retry-After: a person reads the message, not the header
    throw RATE_LIMITED.error(
      { message: `Too many codes requested: you can ask for another in ${describeWait(outcome.wait)}` },
      { headers: retryAfterHeader(outcome.wait) },
    );
  }
  const smsId = outcome.smsId;
  if (smsId !== null) afterResponse('sms.otp', () => dispatchQueuedSms(1, smsId));
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
  const rows = await asService((tx) =>
    tx`
    select 1 from private.otps
     where phone = ${phone} and context = ${context} and consumed_at is null and expires_at > now()
     limit 1`
  );
  return rows.length > 0;
}
