// Database access with postgres.js. Two ways in (each retried when Postgres breaks a deadlock by
// aborting it, so a callback only talks to the database):
//   asUser(user, fn)  one transaction as role `authenticated` with the caller's JWT claims set
//                     exactly as PostgREST sets them, so row-level security and auth.uid() apply
//   asService(fn)     one transaction as role `service_role` (webhooks, jobs, auth internals)
// Both also set the configuration the SQL functions read from the transaction.
import postgres from 'postgres';
import { getConfig } from './config.ts';
import { log } from './log.ts';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;
/** A piece of a query (tx`...`) put into another one. */
export type Fragment = postgres.Fragment;

let client: Sql | undefined;

/**
 * Postgres timestamptz text ('2026-11-21 23:52:51.123456+00', the session runs in UTC) -> ISO 8601
 * with every microsecond kept. A JS Date would drop the microseconds, and with them the exactness
 * of the `before` cursors that pages are cut with.
 */
function pgTimestampToIso(text: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:\+00(?::00)?)?$/.exec(text);
  return m ? `${m[1]}T${m[2]}Z` : new Date(text).toISOString();
}

export function db(): Sql {
  if (!client) {
    const config = getConfig();
    client = postgres(config.databaseUrl, {
      prepare: false, // works through Supabase's transaction pooler
      max: config.DB_POOL_MAX,
      onnotice: () => {},
      connection: { application_name: 'escrow-functions', TimeZone: 'UTC' },
      types: {
        timestamptz: {
          to: 1184,
          from: [1184],
          serialize: (v: unknown) => (v instanceof Date ? v.toISOString() : String(v)),
          parse: pgTimestampToIso,
        },
      },
    });
  }
  return client;
}

/** Closes the pool (local server shutdown, tests). */
export async function closeDb(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.end({ timeout: 5 });
}

export interface UserClaims {
  sub: string;
  role: 'authenticated';
  session_id: string;
  phone: string;
  [claim: string]: unknown;
}

/**
 * Settings the SQL reads from the transaction, set in the same statement as the role: the invite
 * SMS cap (private.invite_sms_cap), so every transaction that may queue an invite SMS honours the
 * configuration, and, as service_role, the payments provider (private.payments_provider), which
 * an escrow payout that a release starts records, as a withdrawal does.
 */
const inviteCap = () => String(getConfig().INVITE_SMS_MAX_PER_PHONE_PER_DAY);

/**
 * SQLSTATEs after which the whole transaction can simply run again: deadlock_detected (Postgres
 * aborted this transaction to break a lock cycle with another one) and serialization_failure.
 */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 3;

/**
 * Runs one transaction, and runs it again (up to 3 times in all) when Postgres aborted it to break
 * a deadlock: everything it did was rolled back, so the retry starts from nothing. This is why a
 * transaction callback must only talk to the database: side effects (a provider call, an SMS) go
 * after the commit (shared/background.ts). Two transitions on two escrows between the same two
 * people can take the parties' per-user locks in opposite orders (docs/decisions.md, issue 11).
 */
async function retrying<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await run();
    } catch (err) {
      const code = (err as { code?: string } | null)?.code ?? '';
      if (attempt >= ATTEMPTS || !RETRYABLE.has(code)) throw err;
      log.warn('db.retry', { code, attempt });
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.floor(Math.random() * 20)));
    }
  }
}

export function asUser<T>(claims: UserClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return retrying(() => asUserOnce(claims, fn));
}

function asUserOnce<T>(claims: UserClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db().begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                    set_config('request.jwt.claim.sub', ${claims.sub}, true),
                    set_config('escrow.invite_sms_max_per_phone_per_day', ${inviteCap()}, true)`;
    return fn(tx);
  }) as Promise<T>;
}

export function asService<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return retrying(() => asServiceOnce(fn));
}

/**
 * One service-role transaction that is never run again: for the one callback that does more than
 * talk to the database (dispatching SMS sends them while it holds the claimed rows).
 */
export function asServiceOnce<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db().begin(async (tx) => {
    await tx`select set_config('role', 'service_role', true),
                    set_config('request.jwt.claims', '{"role":"service_role"}', true),
                    set_config('escrow.invite_sms_max_per_phone_per_day', ${inviteCap()}, true),
                    set_config('escrow.payments_provider', ${getConfig().PAYMENTS_PROVIDER}, true)`;
    return fn(tx);
  }) as Promise<T>;
}

/** True when err is a Postgres error with the given SQLSTATE (e.g. 23505 unique_violation). */
export function isPgError(err: unknown, code: string, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string } | null;
  return !!e && e.code === code && (constraint === undefined || e.constraint_name === constraint);
}
