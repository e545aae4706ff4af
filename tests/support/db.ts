// Direct access to the test database: reading the SMS outbox, moving time by editing rows,
// and acting as a given user under row-level security (pgTAP-style).
import postgres from 'postgres';
import { expect, inject } from 'vitest';
import { renderSms } from '../../shared/messages/texts.ts';
import { type SmsMessage } from '../../shared/messages/catalog.ts';
import { LEDGER_HOLDS, ledgerInvariants } from './ledger-checks.ts';

let sql: postgres.Sql | undefined;

export function testDb(): postgres.Sql {
  sql ??= postgres(inject('databaseUrl'), { max: 4, onnotice: () => {} });
  return sql;
}

type OutboxRow = { body: string | null; message: SmsMessage };

/**
 * What an outbox row says: the body it was sent with (or written with: one-time codes), else, while
 * it waits to be dispatched or is withheld, its message written out as dispatching writes it.
 */
const smsText = (row: OutboxRow): string => row.body ?? renderSms(row.message);

/** The newest SMS for phone (E.164), or undefined. Withheld rows (never sent) are not messages. */
export async function lastSms(phone: string): Promise<string | undefined> {
  const [row] = await testDb()<OutboxRow[]>`
    select body, message from private.sms_outbox where phone = ${phone} and withheld is null order by id desc limit 1`;
  return row ? smsText(row) : undefined;
}

/** SQL LIKE as a regular expression: % any run, _ any one character, \ escapes the next one. */
function likeToRegExp(like: string): RegExp {
  let re = '';
  for (let i = 0; i < like.length; i++) {
    const ch = like[i] as string;
    if (ch === '\\' && i + 1 < like.length) re += (like[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') re += '[\\s\\S]*';
    else if (ch === '_') re += '[\\s\\S]';
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * How many SMS rows for phone, withheld ones included, say something matching the SQL LIKE
 * pattern (what `body like pattern` counted when bodies were written at once).
 */
export async function smsMatching(phone: string, like: string): Promise<number> {
  const rows = await testDb()<OutboxRow[]>`select body, message from private.sms_outbox where phone = ${phone}`;
  const re = likeToRegExp(like);
  return rows.filter((r) => re.test(smsText(r))).length;
}

export async function smsCount(phone: string): Promise<number> {
  const [row] = await testDb()<
    { n: number }[]
  >`select count(*)::int as n from private.sms_outbox where phone = ${phone} and withheld is null`;
  return row?.n ?? 0;
}

/** The 6-digit code of the newest SMS to phone. */
export async function lastOtp(phone: string): Promise<string> {
  const body = await lastSms(phone);
  const code = body?.match(/\b\d{6}\b/)?.[0];
  if (!code) throw new Error(`no OTP SMS for ${phone} (last: ${body ?? 'none'})`);
  return code;
}

/**
 * Runs fn in a transaction as role `authenticated` with sub = userId, then rolls back. The settings
 * are those shared/core/db.ts asUser makes for a request (role, claims), with the legacy claim.sub too.
 */
export async function asUserSql<T>(userId: string, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  let result: T;
  const rollback = new Error('rollback');
  try {
    await testDb().begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true),
                      set_config('request.jwt.claims', ${JSON.stringify({ sub: userId, role: 'authenticated' })}, true),
                      set_config('request.jwt.claim.sub', ${userId}, true)`;
      result = await fn(tx);
      throw rollback;
    });
  } catch (err) {
    if (err !== rollback) throw err;
  }
  return result!;
}

/** Same as asUserSql for the anon role (no user). */
export async function asAnonSql<T>(fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  let result: T;
  const rollback = new Error('rollback');
  try {
    await testDb().begin(async (tx) => {
      await tx`select set_config('role', 'anon', true), set_config('request.jwt.claims', '{"role":"anon"}', true)`;
      result = await fn(tx);
      throw rollback;
    });
  } catch (err) {
    if (err !== rollback) throw err;
  }
  return result!;
}

export interface PgFailure {
  code: string | undefined;
  message: string;
}

/** Runs the statement and returns the Postgres error it raised, or null when it succeeded. */
export async function failureOf(run: () => Promise<unknown>): Promise<PgFailure | null> {
  try {
    await run();
    return null;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { code: e.code, message: String(e.message) };
  }
}

/** The statement, run as the user (or anon), fails with SQLSTATE 42501 (insufficient privilege). */
export async function expectDenied(
  as: 'anon' | string,
  fn: (tx: postgres.TransactionSql) => Promise<unknown>,
  label: string,
): Promise<PgFailure> {
  const failure = await failureOf(() => (as === 'anon' ? asAnonSql(fn) : asUserSql(as, fn)));
  expect(failure, `${label}: expected permission denied, but it succeeded`).not.toBeNull();
  expect(failure!.code, `${label}: ${failure!.message}`).toBe('42501');
  return failure!;
}

/**
 * The ledger's invariants over the whole database: balances sum to zero, every balance equals its
 * entries, every transfer balances, no wallet or hold is negative (./ledger-checks.ts).
 */
export async function expectLedgerInvariants(message?: string): Promise<void> {
  expect(await ledgerInvariants(testDb()), message).toEqual(LEDGER_HOLDS);
}
