// Database access with postgres.js. Two ways in (each retried when Postgres breaks a deadlock by
// aborting it, so a callback only talks to the database):
//   asUser(user, fn)  one transaction as role `authenticated` with the caller's JWT claims set
//                     exactly as PostgREST sets them, so row-level security and auth.uid() apply
//   asService(fn)     one transaction as role `service_role` (webhooks, jobs, auth internals)
// Both also set the configuration the SQL functions read from the transaction.
import postgres from 'postgres';
import { getConfig } from './config.ts';
import { log } from './log.ts';
import { UNAUTHENTICATED } from './refusals.ts';
import { type RequestSession, requestSession, SESSION_ENDED, uncheckedSession } from './request-session.ts';
import { currentKeyClaim, type KeyClaim, noteClaim } from './key-claim.ts';

export type Sql = postgres.Sql;
/** What a transaction callback gets: the tagged-template query function of its connection. */
export type Tx = postgres.ISql;
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
      // after Postgres comes back (a restart, a failover), reconnect within a second or two: the
      // default backoff grows with every failed attempt of the whole pool, up to 20 s
      backoff: (attempts: number) => Math.min(0.05 * 2 ** attempts, 2),
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
 * SMS caps per phone and per initiator (private.invite_sms_cap, private.invite_sms_initiator_cap), so every transaction that may queue an invite SMS honours the
 * configuration, and, as service_role, the payments provider (private.payments_provider), which
 * an escrow payout that a release starts records, as a withdrawal does.
 */
const inviteCap = () => String(Math.trunc(getConfig().INVITE_SMS_MAX_PER_PHONE_PER_DAY));
/** INVITE_SMS_MAX_PER_INITIATOR_PER_DAY, for private.invite_sms_initiator_cap. */
const initiatorInviteCap = () => String(Math.trunc(getConfig().INVITE_SMS_MAX_PER_INITIATOR_PER_DAY));

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
 * after the commit (shared/core/background.ts). Two transitions on two escrows between the same two
 * people can take the parties' per-user locks in opposite orders (docs/decisions.md#disputes).
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
  return retrying(() => transaction(userSetup(claims), fn));
}

/** The rows of each query of a pipelined read, in order. */
// deno-lint-ignore no-explicit-any
type Queries = readonly postgres.PendingQuery<any>[];
type Results<Q extends Queries> = { -readonly [K in keyof Q]: Awaited<Q[K]> };

/**
 * A read as the user in one round trip, where asUser waits for each query its callback awaits and
 * then for COMMIT. `read` returns its queries unawaited; their rows come back in the same order.
 * When every query is text (no parameters, no fragments: `sqlText`, `inline`, or tx`...` with no
 * value in it) the setup and the queries go as one simple-protocol message, one transaction
 * (oneMessage); otherwise BEGIN, the setup, the queries and COMMIT are pipelined together.
 */
export function readAsUser<Q extends Queries>(claims: UserClaims, read: (tx: Tx) => [...Q]): Promise<Results<Q>> {
  return retrying(async () => (await pipelined([{ setup: userSetup(claims), read }]))[0] as Results<Q>);
}

/**
 * The same in one transaction of two parts: first `service` as service_role (what the user may not
 * read directly, such as their ledger balance), then `user` as the user, with row-level security.
 */
export function readAsServiceThenUser<S extends Queries, U extends Queries>(
  claims: UserClaims,
  service: (tx: Tx) => [...S],
  user: (tx: Tx) => [...U],
): Promise<[Results<S>, Results<U>]> {
  return retrying(async () =>
    (await pipelined([{ setup: serviceSetup, read: service }, {
      setup: userSetup(claims),
      read: user,
    }])) as [Results<S>, Results<U>]
  );
}

/**
 * Statements as service_role in one round trip, like readAsUser: with `inline` (all text) the
 * setup and the statements are one message and one transaction; else BEGIN, the setup, the
 * statements and COMMIT are sent together. For a transition, which is one SQL function in one
 * transaction and needs no answer before the transaction can end.
 */
export function callAsService<Q extends Queries>(call: (tx: Tx) => [...Q]): Promise<Results<Q>> {
  return retrying(async () => (await pipelined([{ setup: serviceSetup, read: call }]))[0] as Results<Q>);
}

export function asService<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return retrying(() => asServiceOnce(fn));
}

/**
 * One service-role transaction that is never run again: for the one callback that does more than
 * talk to the database (dispatching SMS sends them while it holds the claimed rows).
 */
export function asServiceOnce<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return transaction(serviceSetup, fn);
}

/**
 * The SQL of a setup statement (no parameters: see `text`), sent in one message with BEGIN. `first`
 * holds the select items that run before the role changes: the live-session check and the claim
 * of the request's Idempotency-Key, when this statement is the first to carry them.
 */
type Setup = (session: RequestSession | undefined, claim?: KeyClaim) => string;

/**
 * A text value written into a statement as a dollar-quoted literal, with a tag that does not
 * occur in the value ($q$, else $q1$, $q2$, ...), so no value can end it early: no quote,
 * backslash or setting matters inside. Like an untyped parameter, it takes its type from where it
 * stands (a uuid column, a timestamptz argument, jsonb). Values go into the hot statements this way,
 * not as parameters, because postgres.js sends a statement with parameters (prepare: false, which
 * Supabase's transaction pooler needs) as Parse and Describe first and waits for the answer
 * before Bind and Execute: a round trip more, with nothing queued behind it sent meanwhile. A
 * statement without parameters goes out at once, pipelined with BEGIN, the setup and the queries
 * after it (docs/performance.md).
 */
function text(value: string): string {
  if (value.includes('\0')) throw new TypeError('text cannot hold NUL characters');
  for (let n = 0;; n++) {
    const tag = `$q${n === 0 ? '' : n}$`;
    // the leading space: a dollar quote right after an identifier or keyword character would be
    // read as part of that word (x$q$...), so it always starts a token of its own
    if ((value + tag).indexOf(tag) === value.length) return ` ${tag}${value}${tag}`;
  }
}

/** What `inline` and `sqlLiteral` write as literals. */
export type InlineValue = string | number | boolean | null | Date | readonly unknown[] | { [key: string]: unknown };

/** A value as SQL literal text (see `text`), for statements composed as text (`sqlText`). */
export function sqlLiteral(value: InlineValue): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return text(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError('only safe integers are written as digits');
    return value < 0 ? `(${value})` : String(value);
  }
  if (value instanceof Date) return text(value.toISOString());
  return text(JSON.stringify(value)); // objects and arrays: as jsonb text
}

/**
 * tx`...` with every value written as a literal (strings, safe integers, booleans, null, dates,
 * and objects or arrays as JSON): one statement without parameters, pipelined. For the statements
 * of the request path; fragments (tx`...`) cannot be put inside.
 */
export const inline =
  (tx: Tx) => <R extends postgres.Row[] = postgres.Row[]>(strings: TemplateStringsArray, ...values: InlineValue[]) =>
    tx.unsafe<R>(strings.reduce((sql, part, i) => sql + part + (i < values.length ? sqlLiteral(values[i]!) : ''), ''));

/** A whole statement given as text, every value already written with sqlLiteral. */
export const sqlText = <R extends postgres.Row[] = postgres.Row[]>(tx: Tx, statement: string) =>
  tx.unsafe<R>(statement);

/**
 * The live-session check of a bearer request still unchecked (shared/core/request-session.ts), put first
 * in the setup statement: it runs before the role changes, as its owner, and its ES401 aborts the
 * transaction before any of the callback's statements runs.
 */
const sessionCheck = (session: RequestSession | undefined) =>
  session ? `private.session_assert(${text(session.sessionId)}::uuid, ${text(session.userId)}::uuid), ` : '';

/**
 * The claim of the request's Idempotency-Key (shared/core/key-claim.ts), as a select item of the
 * statement that carries it: after the session check, before the role changes (it runs as the
 * connecting role, like the check). Its refusals (a replay, another body, still running) abort the
 * transaction before any of the operation's statements runs.
 */
const claimCall = (claim: KeyClaim) =>
  `private.idempotency_claim(${text(claim.userId)}::uuid, ${text(claim.operation)}, ${text(claim.key)}, ${
    text(claim.hash)
  })`;
const claimItem = (claim: KeyClaim | undefined) => (claim ? `${claimCall(claim)}, ` : '');

/**
 * After the claim committed (a provider operation's later transactions): its reference, which
 * private.idempotency_reference reads, so what the request records goes under it.
 */
const referenceItem = () => {
  const found = currentKeyClaim()?.found;
  return found ? `set_config('escrow.idempotency_reference', ${text(found.reference)}, true), ` : '';
};

/**
 * The role and claims PostgREST sets for this user (request.jwt.claims, which auth.uid() reads),
 * and the settings the SQL reads.
 */
const userSetup = (claims: UserClaims): Setup => (session, claim) =>
  `select ${sessionCheck(session)}${claimItem(claim)}${referenceItem()}set_config('role', 'authenticated', true), ` +
  `set_config('request.jwt.claims', ${text(JSON.stringify(claims))}, true), ` +
  `set_config('escrow.invite_sms_max_per_phone_per_day', '${inviteCap()}', true), ` +
  `set_config('escrow.invite_sms_max_per_initiator_per_day', '${initiatorInviteCap()}', true)`;

const serviceSetup: Setup = (session, claim) =>
  `select ${sessionCheck(session)}${claimItem(claim)}${referenceItem()}set_config('role', 'service_role', true), ` +
  `set_config('request.jwt.claims', '{"role":"service_role"}', true), ` +
  `set_config('escrow.invite_sms_max_per_phone_per_day', '${inviteCap()}', true), ` +
  `set_config('escrow.invite_sms_max_per_initiator_per_day', '${initiatorInviteCap()}', true), ` +
  `set_config('escrow.payments_provider', ${text(getConfig().PAYMENTS_PROVIDER)}, true)`;

/** Nothing more runs for a request whose session was found ended (a handler that caught the 401). */
function refuseEndedSession(): void {
  if (requestSession()?.state === 'ended') throw UNAUTHENTICATED.error({ reason: 'ended' });
}

/**
 * Before an effect outside the database (a provider call, an SMS): the current bearer request's
 * session must be live. Free when a statement of the request already checked it; one statement
 * when none has; a 401 when it has ended. Nothing to check outside a bearer request.
 */
export async function ensureSessionLive(): Promise<void> {
  const session = requestSession();
  if (!session) return;
  if (session.state === 'unchecked') {
    session.state = (await sessionIsLive(session.sessionId, session.userId)) ? 'live' : 'ended';
  }
  if (session.state === 'ended') throw UNAUTHENTICATED.error({ reason: 'ended' });
}

/**
 * Whether the session is live for this user, asked on its own (one statement, off the hot path):
 * the same private.session_assert the first statement of a request runs.
 */
export async function sessionIsLive(sessionId: string, userId: string): Promise<boolean> {
  try {
    await db()`select private.session_assert(${sessionId}::uuid, ${userId}::uuid)`;
    return true;
  } catch (err) {
    if (isPgError(err, SESSION_ENDED)) return false;
    throw err;
  }
}

/**
 * A transaction on a connection of its own, with BEGIN and the setup statement sent together with
 * the callback's first query (pipelining: one round trip where postgres.js's sql.begin takes three).
 * Postgres runs them in order, so the first query runs with the role and claims already set; if
 * BEGIN or the setup fails, every query after it fails too and nothing commits. COMMIT is checked:
 * Postgres answers a COMMIT of a failed transaction with ROLLBACK, which must never pass for success
 * (a callback that caught a query's error and went on).
 */
/** Statements of a transaction sent with its COMMIT (sendWithCommit), by connection. */
const withCommit = new WeakMap<Tx, Promise<unknown>[]>();

/**
 * Sends a statement of the current transaction without waiting for its answer, so that it goes to
 * Postgres together with COMMIT: the last write of a callback whose result nothing reads (a
 * webhook's outcome recorded in its inbox row). If it fails, the transaction fails with its error.
 */
export function sendWithCommit(tx: Tx, statement: postgres.PendingQuery<postgres.Row[]>): void {
  statement.catch(() => {}); // sent now; its error is reported by the transaction
  withCommit.set(tx, [...(withCommit.get(tx) ?? []), statement]);
}

async function transaction<T>(setup: Setup, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const keyClaim = currentKeyClaim();
  if (keyClaim?.mode === 'atomic' && keyClaim.state !== 'done') return await inUnit(keyClaim, setup, fn);
  // a provider claim rides in the request's first transaction and commits with it
  const claim = keyClaim?.state === 'unclaimed' ? keyClaim : undefined;
  refuseEndedSession();
  const conn = await reserveConnection();
  const c = conn.sql;
  try {
    const opened = open(conn, setup, claim);
    let out: T;
    let sentWithCommit: Promise<unknown>[] = [];
    try {
      out = await conn.orLost(fn(c));
    } catch (err) {
      await conn.rollback();
      await conn.orLost(opened); // when BEGIN or the setup failed, that is the cause, not the query after it
      throw err;
    } finally {
      // statements sent with the commit belong to this attempt only
      sentWithCommit = withCommit.get(c) ?? [];
      withCommit.delete(c);
    }
    await conn.orLost(opened); // a callback that sent nothing: its setup may still have failed
    const commit = c`commit`;
    commit.catch(() => {}); // sent now, behind the statements sent with it
    try {
      await conn.orLost(Promise.all(sentWithCommit));
    } catch (err) {
      await conn.rollback();
      throw err;
    }
    await committed(await conn.orLost(commit), conn);
    if (claim) claim.state = 'claimed';
    return out;
  } finally {
    await conn.release();
  }
}

interface ReadPart {
  setup: Setup;
  read: (tx: Tx) => Queries;
}

/**
 * One transaction of one or more parts, each a setup statement (its role and claims) and its
 * queries, all sent at once with BEGIN and COMMIT. Only the first setup checks the session: the
 * transaction stops there when it has ended.
 */
async function pipelined(parts: ReadPart[]): Promise<unknown[][]> {
  const keyClaim = currentKeyClaim();
  if (keyClaim?.mode === 'atomic' && keyClaim.state !== 'done') return await pipelinedInUnit(keyClaim, parts);
  const claim = keyClaim?.state === 'unclaimed' ? keyClaim : undefined;
  const out = await pipelinedAlone(parts, claim);
  if (claim) claim.state = 'claimed';
  return out;
}

async function pipelinedAlone(parts: ReadPart[], claim: KeyClaim | undefined): Promise<unknown[][]> {
  refuseEndedSession();
  const conn = await reserveConnection();
  const c = conn.sql;
  try {
    const reads = parts.map((part) => part.read(c));
    const texts = reads.map((qs) => qs.map(statementText));
    if (texts.every((qs) => qs.every((t) => t !== null))) {
      return await oneMessage(
        conn,
        parts.map((part, i) => ({ setup: part.setup, statements: texts[i] as string[] })),
        claim,
      );
    }
    const opened = open(conn, parts[0]!.setup, claim);
    const sent: Promise<unknown>[][] = parts.map((part, i) => [
      ...(i === 0 ? [] : [c.unsafe(part.setup(undefined))]),
      ...(reads[i] as Queries),
    ]);
    const commit = c`commit`;
    const all = Promise.all([...sent.flat(), commit]);
    all.catch(() => {});
    try {
      await conn.orLost(all);
    } catch (err) {
      // whatever failed first is the cause; a COMMIT after a failure has already rolled back
      await conn.rollback();
      await conn.orLost(opened);
      for (const q of sent.flat()) await conn.orLost(q);
      throw err;
    }
    await opened;
    await committed(await commit, conn);
    return Promise.all(sent.map((qs, i) => Promise.all(i === 0 ? qs : qs.slice(1))));
  } finally {
    await conn.release();
  }
}

/**
 * The text of a statement that has no parameters and no fragments (tx`...` with no value in it,
 * inline, sqlText), else null. The query is not sent: postgres.js sends a query only when it is
 * awaited.
 */
function statementText(q: postgres.PendingQuery<postgres.Row[]>): string | null {
  const query = q as unknown as { strings?: readonly string[]; args?: readonly unknown[] };
  return query.strings?.length === 1 && query.args?.length === 0 ? (query.strings[0] as string) : null;
}

/**
 * A read whose statements are all text, as one simple-protocol message: the setup statements and
 * the queries, separated by semicolons. Postgres runs the statements of one such message as one
 * transaction (no BEGIN or COMMIT needed, and none is sent), each under the role and claims the
 * statements before it set (set_config(..., true) lasts to its end); the first error ends it and
 * nothing after runs. One message, one answer to parse: about half the CPU of the same read as
 * separate statements (docs/performance.md). Every statement is a SELECT, so each has its result.
 */
async function oneMessage(
  conn: Reserved,
  parts: { setup: Setup; statements: string[] }[],
  claim: KeyClaim | undefined,
): Promise<unknown[][]> {
  const session = uncheckedSession();
  const message = parts
    .flatMap((part, i) => [i === 0 ? part.setup(session, claim) : part.setup(undefined), ...part.statements])
    .join(';\n');
  const options = { onexecute: conn.watch } as postgres.UnsafeQueryOptions;
  let results: postgres.RowList<postgres.Row[]>[];
  try {
    const answer = await conn.orLost(conn.sql.unsafe(message, [], options) as Promise<unknown>);
    results = answer as postgres.RowList<postgres.Row[]>[];
  } catch (err) {
    if (session && isPgError(err, SESSION_ENDED)) session.state = 'ended';
    throw err;
  } finally {
    conn.ended(); // the message's own transaction is over, whichever way it went
  }
  if (session?.state === 'unchecked') session.state = 'live';
  if (claim) noteClaim(claim, (results[0] as postgres.Row[] | undefined)?.[0]);
  const expected = parts.reduce((n, part) => n + 1 + part.statements.length, 0);
  if (!Array.isArray(results[0]) || results.length !== expected) {
    throw new Error(
      `a read of ${expected} statements answered ${Array.isArray(results[0]) ? results.length : 1} results`,
    );
  }
  let at = 0;
  return parts.map((part) => {
    at++; // the setup's result
    const mine = results.slice(at, at + part.statements.length);
    at += part.statements.length;
    return mine;
  });
}

/** The postgres.js connection behind a reserved sql, as much of it as is used here. */
interface PgConnection {
  onclose: ((err: unknown) => void) | null;
}

/**
 * A connection of its own for one transaction, watched for loss. postgres.js does not settle a
 * query sent on a reserved connection after it closed (a Postgres restart): the write throws in a
 * timer and leaves the connection unable to send, and the query waits for ever. So: the first
 * statement captures the connection (onexecute) and hooks its close; everything awaited here races
 * that close; after it, nothing more is sent (no ROLLBACK: Postgres rolled back what the closed
 * connection had open), and the connection is not handed back (the pool reconnects it). The caller
 * sees the connection error, which the endpoint answers with a 503 (isDatabaseUnavailable).
 */
async function reserveConnection() {
  const sql = await db().reserve();
  let connection: PgConnection | undefined;
  let lost: unknown = null;
  let ended = false;
  let onLost: (err: unknown) => void = () => {};
  const closed = new Promise<never>((_, reject) => (onLost = reject));
  closed.catch(() => {});
  return {
    sql,
    /** For the first statement's onexecute: hooks the connection's close. */
    watch(c: PgConnection): boolean {
      connection = c;
      c.onclose = (err) => {
        lost = err ?? new Error('CONNECTION_CLOSED');
        onLost(lost);
      };
      return true; // the connection takes more statements (pipelining)
    },
    /** `work`, or the connection's loss, whichever comes first. */
    orLost<T>(work: Promise<T>): Promise<T> {
      return lost ? Promise.reject(lost) : Promise.race([work, closed]);
    },
    /** The connection closed under the transaction. */
    isLost(): boolean {
      return lost !== null;
    },
    /** The transaction answered COMMIT or ROLLBACK: nothing is left open on the connection. */
    ended(): void {
      ended = true;
    },
    async rollback(): Promise<void> {
      if (!lost && !ended) await this.orLost(sql`rollback`).catch(() => {});
      ended = true;
    },
    /**
     * Back to the pool, never inside an open transaction: whatever left one open (a setup that
     * failed under a callback that sent nothing, a callback that threw before sending) is rolled
     * back first, so no role, claims or aborted state reaches the next user of the connection.
     */
    async release(): Promise<void> {
      await this.rollback();
      if (connection) connection.onclose = null;
      if (!lost) sql.release();
    },
  };
}

type Reserved = Awaited<ReturnType<typeof reserveConnection>>;

/**
 * Sends BEGIN and the setup statement in one message, without waiting for them. The promise
 * settles when both have answered; it records what the session check found. Its rejection is
 * handled by the caller after the callback's own queries (the first cause of a failure is
 * reported, not the queries that failed after it).
 */
function open(conn: Reserved, setup: Setup, claim?: KeyClaim): Promise<void> {
  const session = uncheckedSession();
  // onexecute is postgres.js's own hook (its sql.begin uses it), not in its typings
  const options = { onexecute: conn.watch } as postgres.UnsafeQueryOptions;
  const opened = conn.sql.unsafe(`begin; ${setup(session, claim)}`, [], options).then(
    (results) => {
      if (session?.state === 'unchecked') session.state = 'live';
      if (claim) noteClaim(claim, (results as unknown as postgres.Row[][])[1]?.[0]);
    },
    (err) => {
      if (session && isPgError(err, SESSION_ENDED)) session.state = 'ended';
      throw err;
    },
  );
  opened.catch(() => {});
  return opened;
}

/**
 * Postgres is out of reach (down, restarting, refusing connections) or dropped the connection:
 * nothing the client did, worth a retry shortly (the endpoint's 503).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  return [
    'CONNECTION_CLOSED',
    'CONNECTION_ENDED',
    'CONNECTION_DESTROYED',
    'CONNECT_TIMEOUT',
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    '57P01', // admin_shutdown
    '57P02', // crash_shutdown
    '57P03', // cannot_connect_now
  ].includes(code) || code.startsWith('08'); // connection_exception
}

async function committed(result: postgres.RowList<postgres.Row[]>, conn: Reserved): Promise<void> {
  conn.ended();
  if (result.command !== 'COMMIT') throw new Error(`transaction ended with ${result.command}, not COMMIT`);
}

/** True when err is a Postgres error with the given SQLSTATE (e.g. 23505 unique_violation). */
export function isPgError(err: unknown, code: string, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string } | null;
  return !!e && e.code === code && (constraint === undefined || e.constraint_name === constraint);
}

// ---- The unit of an atomic Idempotency-Key ----------------------------------------------------

/**
 * The one transaction of a request under an atomic Idempotency-Key: its connection, the BEGIN and
 * claim statement (`opened`), and the savepoints handed out so far.
 */
interface Unit {
  conn: Reserved;
  opened: Promise<void>;
  savepoints: number;
}

const units = new WeakMap<KeyClaim, Unit>();

/** The claim's unit, opened on first use: BEGIN, the session check and the claim, then a savepoint. */
async function unitOf(claim: KeyClaim): Promise<Unit> {
  const open = units.get(claim);
  if (open) return open;
  refuseEndedSession();
  const conn = await reserveConnection();
  const session = uncheckedSession();
  const options = { onexecute: conn.watch } as postgres.UnsafeQueryOptions;
  const opened = conn.sql.unsafe(
    `begin; select ${sessionCheck(session)}${claimCall(claim)}; savepoint claimed`,
    [],
    options,
  ).then(
    (results) => {
      if (session?.state === 'unchecked') session.state = 'live';
      noteClaim(claim, (results as unknown as postgres.Row[][])[1]?.[0]);
    },
    (err) => {
      if (session && isPgError(err, SESSION_ENDED)) session.state = 'ended';
      throw err;
    },
  );
  opened.catch(() => {});
  const unit: Unit = { conn, opened, savepoints: 0 };
  units.set(claim, unit);
  claim.state = 'open';
  return unit;
}

/** The handler's transactions on the unit, one after another (one statement stream, one transaction). */
const queues = new WeakMap<KeyClaim, Promise<unknown>>();

function queued<T>(claim: KeyClaim, work: (unit: Unit) => Promise<T>): Promise<T> {
  const before = queues.get(claim) ?? Promise.resolve();
  const run = before.then(async () => await work(await unitOf(claim)));
  queues.set(claim, run.catch(() => {}));
  return run;
}

/**
 * When the unit's opening failed (the claim refused: a replay, another body, still running; the
 * session ended; a deadlock on the key), that is the cause of whatever failed after it: the unit
 * is closed, the claim is free to be tried again (a retry of the whole transaction), and the cause
 * is thrown.
 */
async function throwIfOpeningFailed(claim: KeyClaim, unit: Unit): Promise<void> {
  try {
    await unit.conn.orLost(unit.opened);
  } catch (err) {
    units.delete(claim);
    claim.state = 'unclaimed';
    await unit.conn.release();
    throw err;
  }
}

/**
 * After a segment of the unit failed with `err`: the opening's failure is thrown instead (the
 * cause); a lost connection has nothing left to undo (err is thrown); else the segment's savepoint
 * is rolled back, and the caller throws whichever statement failed first.
 */
async function undoSegment(claim: KeyClaim, unit: Unit, savepoint: string, err: unknown): Promise<void> {
  await throwIfOpeningFailed(claim, unit);
  if (unit.conn.isLost()) throw err;
  await unit.conn.orLost(unit.conn.sql.unsafe(`rollback to savepoint ${savepoint}`)).catch(() => {});
}

/** A transaction of the handler as a savepoint of the unit: the same contract as `transaction`. */
function inUnit<T>(claim: KeyClaim, setup: Setup, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return queued(claim, async (unit) => {
    const c = unit.conn.sql;
    const name = `s${++unit.savepoints}`;
    const started = c.unsafe(`savepoint ${name}; ${setup(undefined)}`);
    started.catch(() => {});
    try {
      const out = await unit.conn.orLost(fn(c));
      await unit.conn.orLost(started);
      await unit.conn.orLost(Promise.all(withCommit.get(c) ?? []));
      // not waited for: the next statement on the connection goes behind it
      c.unsafe(`release savepoint ${name}`).catch(() => {});
      return out;
    } catch (err) {
      await undoSegment(claim, unit, name, err);
      await unit.conn.orLost(started); // a setup that failed is the cause
      throw err;
    } finally {
      withCommit.delete(c);
    }
  });
}

/** A pipelined read or call as a savepoint of the unit: the same contract as `pipelined`. */
function pipelinedInUnit(claim: KeyClaim, parts: ReadPart[]): Promise<unknown[][]> {
  return queued(claim, async (unit) => {
    const c = unit.conn.sql;
    const name = `s${++unit.savepoints}`;
    const reads = parts.map((part) => part.read(c));
    const sent: Promise<unknown>[][] = parts.map((part, i) => [
      c.unsafe(i === 0 ? `savepoint ${name}; ${part.setup(undefined)}` : part.setup(undefined)),
      ...(reads[i] as Queries),
    ]);
    const all = Promise.all(sent.flat());
    all.catch(() => {});
    try {
      await unit.conn.orLost(all);
    } catch (err) {
      await undoSegment(claim, unit, name, err);
      for (const q of sent.flat()) await unit.conn.orLost(q);
      throw err;
    }
    c.unsafe(`release savepoint ${name}`).catch(() => {});
    return Promise.all(sent.map((qs) => Promise.all(qs.slice(1))));
  });
}

/**
 * Ends the unit of an atomic claim: with an answer, the answer is stored and everything commits
 * in one round trip; a refusal's answer is stored after rolling back to just after the claim (the
 * operation leaves nothing but its stored refusal); with none ("not now": a 429, a 5xx, a failure),
 * the whole unit rolls back and the key is free again. No unit (the handler never reached the
 * database) ends nothing. Whatever happens, the claim is done: later transactions of the request
 * run on their own.
 */
export async function endUnit(
  claim: KeyClaim,
  outcome: { status: number; body: string } | null,
): Promise<void> {
  await queues.get(claim);
  const unit = units.get(claim);
  units.delete(claim);
  claim.state = 'done';
  if (!unit) return;
  const { conn } = unit;
  try {
    await conn.orLost(unit.opened);
    if (!outcome) return;
    const c = conn.sql;
    // a refusal leaves nothing of the operation: back to just after the claim
    const undo = outcome.status >= 400 ? 'rollback to savepoint claimed; ' : '';
    const store = c.unsafe(
      `${undo}select set_config('role', 'service_role', true); select private.idempotency_answer(${
        text(claim.userId)
      }::uuid, ${text(claim.operation)}, ${text(claim.key)}, ${outcome.status}, ${text(outcome.body)})`,
    );
    store.catch(() => {});
    const commit = c`commit`;
    commit.catch(() => {});
    await conn.orLost(store);
    await committed(await conn.orLost(commit), conn);
  } finally {
    await conn.release(); // rolls back whatever did not commit
  }
}
