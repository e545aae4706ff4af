// The schema-driven fuzz of the running server (docs/openapi.md, "The fuzz"). fast-check generates
// requests for every operation of docs/api/openapi.json from the document's own request schemas
// (query, body, Idempotency-Key; tests/support/fuzz.ts), seeded and reproducible. Some are kept
// schema-valid, with ids swapped for real fixtures' ids some of the time (built here through the
// real endpoints) and random uuids the rest; the others get one mutation that breaks one rule; ajv
// classifies every request before it is sent. The properties:
// - a schema-valid request gets a 2xx or a refusal of state (401, 403, 404, 409, 429; 402, 502 and
//   503 only while a provider's fake is set to fail), never a 400 and never a 5xx;
// - a schema-invalid request gets a 400 with details;
// - every answer's status is one the operation declares, its body matches the document, its code
//   is one the document lists for that status (tests/support/responses.ts);
// - every operation reaches a 2xx during the run.
// - no payments webhook fails behind its 200 (an error kept in private.webhook_failures).
// A failure prints the request as a curl command, with the seed. FUZZ_SEED=<n> reruns a seed,
// FUZZ_OPS=a,b only those operations, FUZZ_RUNS=<n> changes the requests per operation,
// FUZZ_DEBUG=1 prints every answer.
//
// A clock suite (tests/README.md, "the clock group"): the fuzz sends its own requests to jobs-run,
// with generated clocks, so it runs after every other suite, alone. The job's requests are sent
// last, after every other operation's.
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb } from '../../shared/core/db.ts';
import { type ApiResult, call, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { fundWallet } from '../support/escrows.ts';
import {
  type Answer,
  classify,
  curl,
  type Draft,
  type Draw,
  draws,
  fuzzOperation,
  generate,
  judge,
  mutate,
  seedFor,
  send,
  wire,
} from '../support/fuzz.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { merchantWithFee, newMerchant } from '../support/merchants.ts';
import { operationNames } from '../support/openapi-requests.ts';
import { paystack } from '../support/paystack.ts';
import { newPhone, signUp, type TestUser, verifyPhone } from '../support/users.ts';
import { bindIdentity, codeAt, enrol, grantRoles, newOperator } from '../support/operators.ts';

afterAll(() => closeDb());

// ---- the run's parameters ------------------------------------------------------------------

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601);
/** Requests per operation in the main phase. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** The share of schema-valid requests (the first request of each operation is always one). */
const VALID_SHARE = 0.6;
/** How many operations are fuzzed at once (each on its own fixtures). */
const WORKERS = 4;
const ONLY = process.env.FUZZ_OPS ? new Set(process.env.FUZZ_OPS.split(',')) : undefined;
const included = (name: string) => !ONLY || ONLY.has(name);

/** The operations whose providers are made to fail in the second phase, with the fake that fails. */
const PROVIDER_OPS: Record<string, 'paystack' | 'kyc'> = {
  'wallet-topup': 'paystack',
  'escrow-fund': 'paystack',
  'wallet-withdraw': 'paystack',
  'payout-add': 'paystack',
  'virtual-account-create': 'paystack',
  'merchant-escrow-create': 'paystack',
  'merchant-withdraw': 'paystack',
  'admin-charge-resolve': 'paystack',
  'admin-payout-retry': 'paystack',
  'kyc-start': 'kyc',
  'identity-verify': 'kyc',
};
const PROVIDER_RUNS = 6;
const JOBS = 'jobs-run';
const JOB_RUNS = 14;

// ---- a request being prepared ----------------------------------------------------------------

interface Turn {
  /** 'main', or 'providers failing' (fixtures of its own where the main phase used them up) */
  phase: string;
  d: Draw;
  draft: Draft;
  /** Meant to be schema-valid (else a mutation follows the fixtures). */
  valid: boolean;
  /**
   * The operation's first request (the first three while the providers fail): schema-valid, every
   * swap made, the caller the fixture's, an amount that fits its balance and limits.
   */
  happy: boolean;
}

interface Scenario {
  /** Builds the operation's own fixtures. */
  setup?: () => Promise<void>;
  /** Swaps fixtures' ids and values into the generated request, and picks the caller. */
  prepare?: (t: Turn) => void | Promise<void>;
  /** Reads what the answer gave (a new refresh token). */
  after?: (t: Turn, answer: Answer) => void;
}

/** Where the field is in the request (body or query), if it was generated. */
function slot(t: Turn, field: string): Record<string, unknown> | undefined {
  const body = t.draft.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && field in body) return body;
  if (field in t.draft.query) return t.draft.query;
  return undefined;
}

/** Swap now? Always on the happy request; otherwise with probability p. */
const swapping = (t: Turn, p = 0.7) => t.happy || t.d.chance(p);

/** Sets a generated field to a fixture's value (happy: the first; else sometimes, one of them). */
function swap(t: Turn, field: string, values: readonly string[], p = 0.7): void {
  const where = slot(t, field);
  if (!where || values.length === 0 || !swapping(t, p)) return;
  where[field] = t.happy ? values[0] : t.d.pick(values);
}

/** Sets the field if it was generated. */
function set(t: Turn, field: string, value: unknown): void {
  const where = slot(t, field);
  if (where) where[field] = value;
}

/**
 * The caller: the fixture's user on the happy request and on every schema-invalid one (a 400 must
 * not hide behind a 401); else mostly that user, sometimes another party or a stranger, no token
 * or a token that is not one.
 */
function caller(t: Turn, primary: TestUser, others: readonly TestUser[] = []): void {
  if (t.happy || !t.valid) {
    t.draft.token = primary.accessToken;
    return;
  }
  const roll = t.d.int(0, 99);
  if (roll < 4) t.draft.token = undefined;
  else if (roll < 8) t.draft.token = 'not.a.token';
  else if (roll < 25 && others.length > 0) t.draft.token = t.d.pick(others).accessToken;
  else t.draft.token = primary.accessToken;
}

/**
 * The caller of an operation that takes a merchant key: the fixture's key on the happy request and on
 * every schema-invalid one; else mostly that key, sometimes another merchant's key, a revoked one, a
 * guessed one, a session's token or none.
 */
function keyCaller(t: Turn, primary: string, others: readonly string[] = []): void {
  if (t.happy || !t.valid) {
    t.draft.token = primary;
    return;
  }
  const roll = t.d.int(0, 99);
  if (roll < 4) t.draft.token = undefined;
  else if (roll < 6) t.draft.token = 'not.a.token';
  else if (roll < 10) t.draft.token = `esk_test_${'x'.repeat(40)}`;
  else if (roll < 25 && others.length > 0) t.draft.token = t.d.pick(others);
  else t.draft.token = primary;
}

/** A signed operation's signature: right, but sometimes missing or wrong on a schema-valid request. */
function signature(t: Turn): void {
  if (t.happy || !t.valid) return;
  const roll = t.d.int(0, 99);
  t.draft.signature = roll < 5 ? 'missing' : roll < 10 ? 'wrong' : 'ok';
}

/**
 * Moves the phone's last code more than 60 s into the past, so another may be sent at once (as the
 * auth suites do): a fixture's account had its sign-up code a moment ago.
 */
async function passResendGap(e164: string): Promise<void> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${e164}`}`;
}

/** A phone as the generated one was written: local (0...) or E.164 (+234...). */
const asWritten = (generated: unknown, e164: string) =>
  typeof generated === 'string' && generated.startsWith('0') ? `0${e164.slice(4)}` : e164;

/** The events webhook-payments acts on, and one it does not know. */
const PAYMENT_EVENTS = [
  'charge.success',
  'transfer.success',
  'transfer.failed',
  'transfer.reversed',
  'dedicatedaccount.assign.success',
  'dedicatedaccount.assign.failed',
  'customeridentification.failed',
];

/** A time as Sumsub writes it ('2025-03-01 10:15:30.123', UTC, or with an offset), any year, the ends often. */
const SUMSUB_TIME = fc
  .tuple(
    fc.oneof(fc.constantFrom('0000', '0001', '9999', '2026'), fc.stringMatching(/^[0-9]{4}$/)),
    fc.stringMatching(/^-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[ T]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$/),
    fc.constantFrom('', '.000', '.999'),
    fc.oneof(
      fc.constantFrom('', 'Z', '+2359', '-2359', '+01:00'),
      fc.stringMatching(/^[+-](0[0-9]|1[0-4])[0-5][0-9]$/),
    ),
  )
  .map((parts) => parts.join(''));

// ---- fixtures built through the real endpoints -------------------------------------------------

interface Deal {
  id: string;
  conversationId: string;
  inviteToken: string;
  initiator: TestUser;
  counterparty: TestUser;
  payer: TestUser;
  payee: TestUser;
}

const ok = <T extends ApiResult>(r: T, what: string, status = 200): T => {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r;
};

async function deal(
  initiator: TestUser,
  counterparty: TestUser,
  opts: { category?: string; payerRole?: 'initiator' | 'counterparty'; amount?: number } = {},
): Promise<Deal> {
  const payerRole = opts.payerRole ?? 'initiator';
  const r = ok(
    await post('escrow-create', {
      category: opts.category ?? 'goods_products',
      payer_role: payerRole,
      title: 'Fuzz fixture',
      counterparty_phone: counterparty.phone,
      amount: opts.amount ?? 1_000,
    }, { token: initiator.accessToken }),
    'escrow-create',
    201,
  );
  return {
    id: r.body.data.escrow_id,
    conversationId: r.body.data.conversation_id,
    inviteToken: r.body.data.invite_token,
    initiator,
    counterparty,
    payer: payerRole === 'initiator' ? initiator : counterparty,
    payee: payerRole === 'initiator' ? counterparty : initiator,
  };
}

const escrowCall = (op: string, user: TestUser, id: string, extra: Record<string, unknown> = {}) =>
  post(op, { escrow_id: id, ...extra }, { token: user.accessToken });

/** A deal funded from the payer's wallet and accepted: status funded. */
async function funded(payer: TestUser, payee: TestUser, category = 'goods_products', amount = 1_000) {
  const d = await deal(payer, payee, { category, amount });
  ok(await escrowCall('escrow-fund', payer, d.id, { method: 'wallet' }), 'escrow-fund');
  ok(await escrowCall('escrow-accept', payee, d.id), 'escrow-accept');
  return d;
}

/** A funded deal with a dispute the payer raised. */
async function disputed(payer: TestUser, payee: TestUser, amount = 5_000) {
  const d = await funded(payer, payee, 'goods_products', amount);
  const r = ok(
    await escrowCall('dispute-raise', payer, d.id, { reason_code: 'item_not_received', reason: 'Nothing came at all' }),
    'dispute-raise',
    201,
  );
  return { ...d, disputeId: r.body.data.id as string };
}

async function cardOf(user: TestUser, n: number): Promise<string> {
  const r = await post('card-add', {
    authorization_code: await paystack.authorizeUser(user.id, `AUTH_fuzz_${user.id.slice(0, 8)}_${n}`),
    last4: '4081',
    brand: 'visa',
    exp_month: '12',
    exp_year: '2030',
    signature: `SIG_fuzz_${user.id.slice(0, 8)}_${n}`,
  }, { token: user.accessToken });
  expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
  return r.body.data.id;
}

/** A top-up of NGN 1,000 whose charge the provider verified at NGN 900: held for review. */
async function heldCharge(): Promise<string> {
  const user = await signUp({ tier: 1 });
  const r = ok(await post('wallet-topup', { amount: 1_000 }, { token: user.accessToken }), 'wallet-topup');
  const reference = r.body.data.reference as string;
  await paystack.chargeStatus(reference, 'success', 90_000);
  await paystack.chargeSuccess(reference, { amount: 90_000 });
  return reference;
}

/** A withdrawal of NGN 1,000 whose transfer failed at the provider (the money back in the wallet). */
async function failedPayout(): Promise<string> {
  const user = await signUp({ tier: 1 });
  await fundWallet(user, 3_000);
  await payoutOf(user);
  const r = ok(await post('wallet-withdraw', { amount: 1_000 }, { token: user.accessToken }), 'wallet-withdraw');
  await paystack.transferOutcome(r.body.data.id as string, 'transfer.failed');
  return r.body.data.id as string;
}

let accountSeq = 0;
/** A payout account the Paystack fake knows, saved by the user. */
async function payoutOf(user: TestUser): Promise<string> {
  const number = `7${String(Date.now() % 1e6).padStart(6, '0')}${String(++accountSeq).padStart(3, '0')}`;
  await paystack.registerAccount('058', number, 'OBI ADA');
  const r = ok(
    await post('payout-add', {
      bank_code: '058',
      bank_name: 'Guaranty Trust Bank',
      account_number: number,
      account_name: 'Ada Obi',
    }, { token: user.accessToken }),
    'payout-add',
    201,
  );
  return r.body.data.id;
}

async function activeVirtualAccount(user: TestUser): Promise<void> {
  ok(await post('virtual-account-create', {}, { token: user.accessToken }), 'virtual-account-create');
  const assigned = await paystack.assignOutcome(`${user.id}@customers.escrow.ng`, true);
  expect(assigned.responses[0]?.status).toBe(200);
}

async function milestones(d: Deal, by: TestUser, n: number, amount = 100): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = ok(
      await post('milestone-create', { escrow_id: d.id, title: `Part ${i + 1}`, amount }, { token: by.accessToken }),
      'milestone-create',
      201,
    );
    ids.push(r.body.data.id);
  }
  return ids;
}

const milestoneCall = (op: string, user: TestUser, id: string) =>
  post(op, { milestone_id: id }, { token: user.accessToken });

/** The world every scenario shares: users with money, an admin, a deal to read. */
interface World {
  admin: TestUser;
  /** A finance operator: the money actions (admin-charge-resolve, admin-payout-retry). */
  finance: TestUser;
  payers: TestUser[];
  payees: TestUser[];
  stranger: TestUser;
  /** A draft deal between payers[0] and payees[0], for the reads. */
  d0: Deal;
}
let w: World;
let totpEnrolling: TestUser;
let totpVerifying: { user: TestUser; secret: Uint8Array }[] = [];
let totpHappy = 0;

async function buildWorld(): Promise<World> {
  const [admin, finance, stranger, ...rest] = await Promise.all([
    newOperator(['disputes', 'admin']),
    newOperator(['finance']),
    signUp(),
    ...Array.from({ length: 6 }, () => signUp({ tier: 3 })),
    ...Array.from({ length: 6 }, () => signUp({ tier: 1 })),
  ]);
  const payers = rest.slice(0, 6);
  const payees = rest.slice(6);
  await Promise.all(payers.map((p) => fundWallet(p, 300_000)));
  const d0 = await deal(payers[0]!, payees[0]!);
  ok(
    await post('message-send', { conversation_id: d0.conversationId, content: 'Hello' }, {
      token: payers[0]!.accessToken,
    }),
    'message-send',
    201,
  );
  return { admin: admin!, finance: finance!, payers, payees, stranger: stranger!, d0 };
}

/** payers[i] and payees[i], the two parties of the i-th pair (i modulo the pairs). */
const pair = (i: number): [TestUser, TestUser] => [w.payers[i % w.payers.length]!, w.payees[i % w.payees.length]!];

// ---- each operation's fixtures -----------------------------------------------------------------

/** A pool of fixtures handed out one at a time (happy first); empty: no swap. */
class Pool<T> {
  constructor(public items: T[] = []) {}
  take(t: Turn, p = 0.7): T | undefined {
    if (this.items.length === 0 || !swapping(t, p)) return undefined;
    return this.items.shift();
  }
}

function scenarios(): Record<string, Scenario> {
  // auth
  const loginUsers = new Pool<TestUser>();
  const resetUsers = new Pool<TestUser>();
  const forgotUsers = new Pool<TestUser>();
  const refreshUsers: TestUser[] = [];
  const usedRefreshTokens: string[] = [];
  const logoutUsers: TestUser[] = [];
  let logoutBystander: TestUser;
  // cards, payouts, money
  let cardUser: TestUser, cardIds: string[] = [], defaultCardUser: TestUser, defaultCardIds: string[] = [];
  let payoutUser: TestUser, payoutIds: string[] = [], defaultPayoutUser: TestUser, defaultPayoutIds: string[] = [];
  let addPayoutUser: TestUser, withdrawUser: TestUser, topupUser: TestUser, topupCard = '';
  let heldCharges: string[] = [], failedPayouts: string[] = [];
  let vaUsers: TestUser[] = [], vaUsersLater: TestUser[] = [], vaHolder: TestUser;
  let kycUsers: TestUser[] = [],
    identityUsers: TestUser[] = [],
    profileUser: TestUser,
    nokUser: TestUser,
    exportUser: TestUser,
    deleteBystander: TestUser;
  const deleteUsers = new Pool<TestUser>();
  // merchants
  const merchantCreators = new Pool<TestUser>();
  let merchantOwner: TestUser, merchantKeyOwner: TestUser, merchantWithdrawOwner: TestUser;
  const merchantKeyIds: string[] = [];
  /** One owner with a merchant, for the operations that read or add to it (made once, by whichever needs it first). */
  let merchantOwnerMade: Promise<TestUser> | undefined;
  const merchantOwnerOnce = () =>
    merchantOwnerMade ??= (async () => {
      const u = await signUp({ tier: 4 });
      ok(await post('merchant-create', { name: 'Fuzz Traders' }, { token: u.accessToken }), 'merchant-create', 201);
      return u;
    })();
  // a merchant's webhook endpoints and their deliveries: one merchant with endpoints, a key and a
  // delivery of each state, and a second merchant whose key and ids are another's
  let hooksOwner: TestUser;
  let hooksKey = '';
  const hooksOtherKeys: string[] = [];
  const hookEndpointIds: string[] = [];
  /** Endpoints for merchant-webhook-delete alone. */
  const hookDeleteIds: string[] = [];
  const hookDeliveryIds: string[] = [];
  let hooksMade: Promise<void> | undefined;
  const hooksOnce = () =>
    hooksMade ??= (async () => {
      const [mine, other] = [await newMerchant('Fuzz Hooks'), await newMerchant('Fuzz Others')];
      hooksOwner = mine.owner;
      hooksKey = mine.key;
      // another merchant's key, and a revoked key of this one
      const revoked = ok(
        await post('merchant-key-create', { name: 'gone' }, { token: mine.owner.accessToken }),
        'merchant-key-create',
        201,
      );
      ok(
        await post('merchant-key-revoke', { key_id: revoked.body.data.id }, { token: mine.owner.accessToken }),
        'merchant-key-revoke',
      );
      hooksOtherKeys.push(other.key, revoked.body.data.key);
      const endpointOf = async (owner: TestUser) =>
        ok(
          await post('merchant-webhook-create', { url: 'http://127.0.0.1:9/fuzz' }, { token: owner.accessToken }),
          'merchant-webhook-create',
          201,
        )
          .body.data.id as string;
      hookEndpointIds.push(await endpointOf(mine.owner), await endpointOf(mine.owner));
      for (let i = 0; i < 3; i++) hookDeleteIds.push(await endpointOf(mine.owner));
      const otherEndpoint = await endpointOf(other.owner);
      hookDeleteIds.push(otherEndpoint);
      // deliveries written as the queue writes them (the job is the fuzz's last operation): pending,
      // failed and succeeded ones of this merchant, and one of the other's
      const [event] = await testDb()<{ id: string }[]>`
        insert into private.events (kind, subject_id, escrow_id, data)
        values ('escrow', gen_random_uuid(), gen_random_uuid(), '{"status":"draft","previous_status":null}')
        returning id::text`;
      void event;
      for (
        const [endpoint, status] of [
          [hookEndpointIds[0], 'failed'],
          [hookEndpointIds[1], 'pending'],
          [otherEndpoint, 'failed'],
        ] as const
      ) {
        const [d] = await testDb()<{ id: string }[]>`
          insert into private.webhook_deliveries (endpoint_id, event_id, type, status, next_attempt_at, attempts)
          values (${endpoint!}, ${event!.id}::bigint, 'escrow.created', ${status},
                  ${status === 'pending' ? new Date(Date.now() + 86_400_000).toISOString() : null}::timestamptz, 1)
          returning id`;
        hookDeliveryIds.push(d!.id);
      }
    })();

  // merchant escrows: one merchant's key and its escrows, another merchant's key
  let escrowMerchant: {
    key: string;
    otherKey: string;
    ids: string[];
    refs: string[];
    cancel: string[];
    deliver: string[];
  };
  let escrowMerchantMade: Promise<typeof escrowMerchant> | undefined;
  const escrowMerchantOnce = () =>
    escrowMerchantMade ??= (async () => {
      const [shop, otherShop] = await Promise.all([newMerchant('Fuzz Shop'), newMerchant('Fuzz Other Shop')]);
      const [key, otherKey] = [shop.key, otherShop.key];
      const made = await Promise.all(Array.from({ length: 16 }, async (_, i) => {
        const reference = `fuzz-${i}-${Date.now()}`;
        const r = ok(
          await post('merchant-escrow-create', {
            reference,
            category: 'goods_products',
            title: 'Fuzz merchant fixture',
            amount: 1_000,
            buyer_phone: newPhone().e164,
            seller_phone: newPhone().e164,
          }, { token: key }),
          'merchant-escrow-create',
          201,
        );
        return { id: r.body.data.id as string, reference };
      }));
      // funded by the buyer's checkout, for merchant-escrow-deliver
      const deliver = made.slice(12).map((m) => m.id);
      for (const id of deliver) {
        const [row] = await testDb()<{ checkout_tx: string }[]>`
          select checkout_tx from private.merchant_escrows where escrow_id = ${id}`;
        await paystack.chargeSuccess(row!.checkout_tx);
      }
      return {
        key,
        otherKey,
        ids: made.slice(0, 4).map((m) => m.id),
        refs: made.slice(0, 4).map((m) => m.reference),
        cancel: made.slice(4, 12).map((m) => m.id),
        deliver,
      };
    })();
  const escrowKeyCaller = (t: Turn) => keyCaller(t, escrowMerchant.key, [escrowMerchant.otherKey]);
  // escrows
  const pools: Record<string, Deal[]> = {};
  let fundDeals: Deal[] = [], fundDealsLater: Deal[] = [];
  const fundCards: Record<string, string> = {};
  let respondDeals: (Deal & { proposalId: string })[] = [];
  let resolveDeals: (Deal & { disputeId: string })[] = [];
  // operators: users a role may be granted to, operators holding every role, approvals to decide
  // and the second admin (24 hours of tenure) who decides them
  let grantees: string[] = [];
  let roleHolders: string[] = [];
  let approvalIds: string[] = [];
  let secondAdmin: TestUser;
  const eligibleUser = async () => {
    const u = await signUp({ tier: 3 });
    await bindIdentity(u.id);
    return u;
  };
  // the operator account actions: their own operators and users, which no other scenario uses
  // (a freeze or an ended session would refuse the others' requests)
  const accountOps: Partial<Record<'finance' | 'support', TestUser>> = {};
  const accountUsers: Record<'freeze' | 'unfreeze' | 'revoke', string[]> = { freeze: [], unfreeze: [], revoke: [] };
  let smsIds: number[] = [];
  const accountOp = async (role: 'finance' | 'support') => (accountOps[role] ??= await newOperator([role]));
  let disputedRead: Deal, proposeDeal: Deal;
  let hiring: Record<'create' | 'update' | 'approve' | 'complete' | 'release', Deal>;
  const milestoneIds: Record<string, string[]> = {};
  let notificationIds: string[] = [];
  // webhooks
  let hookUser: TestUser, kycHookUsers: TestUser[] = [];
  const topupRefs: { reference: string; kobo: number }[] = [];
  const identityRefs: string[] = [];

  const escrowIdOps = (op: string, role: 'payer' | 'payee' | 'initiator' | 'counterparty' | 'either'): Scenario => ({
    prepare: (t) => {
      const deals = pools[op] ?? [];
      const i = t.happy ? 0 : t.d.int(0, Math.max(0, deals.length - 1));
      const d = deals[i];
      if (d) swap(t, 'escrow_id', [d.id]);
      const main = !d ? w.payers[0]! : role === 'either' ? (t.d.chance(0.5) ? d.initiator : d.counterparty) : d[role];
      caller(t, main, d ? [d.initiator, d.counterparty, w.stranger] : [w.stranger]);
    },
  });

  return {
    // ---- auth: every session-ending or code-using call on users of its own ------------------
    'auth-send-otp': {
      prepare: (t) => {
        if (swapping(t)) set(t, 'phone', asWritten(slot(t, 'phone')?.phone, newPhone().e164));
      },
    },
    'auth-verify': {
      setup: async () => {
        loginUsers.items = await Promise.all([signUp(), signUp(), signUp()]);
      },
      prepare: async (t) => {
        if (!t.valid) return;
        const body = t.draft.body as Record<string, unknown>;
        if (body.context === 'login') {
          const u = loginUsers.take(t);
          if (!u) return;
          await passResendGap(u.phone);
          ok(await post('auth-send-otp', { phone: u.phone, context: 'login' }), 'auth-send-otp');
          Object.assign(body, {
            phone: asWritten(body.phone, u.phone),
            otp_code: await lastOtp(u.phone),
            password: u.password,
          });
        } else if (swapping(t)) {
          const { e164 } = newPhone();
          ok(await post('auth-send-otp', { phone: e164, context: 'signup' }), 'auth-send-otp');
          Object.assign(body, { phone: asWritten(body.phone, e164), otp_code: await lastOtp(e164) });
        }
      },
    },
    'auth-signup': {
      prepare: async (t) => {
        if (!t.valid || !swapping(t)) return;
        const { e164 } = newPhone();
        await verifyPhone(e164);
        set(t, 'phone', asWritten(slot(t, 'phone')?.phone, e164));
      },
    },
    'auth-refresh': {
      setup: async () => {
        refreshUsers.push(...(await Promise.all([signUp(), signUp()])));
      },
      prepare: (t) => {
        if (!swapping(t)) return;
        const reuse = !t.happy && usedRefreshTokens.length > 0 && t.d.chance(0.2);
        set(
          t,
          'refresh_token',
          reuse ? t.d.pick(usedRefreshTokens) : t.d.pick(refreshUsers.slice(0, t.happy ? 1 : 2)).refreshToken,
        );
      },
      after: (t, answer) => {
        const sent = (t.draft.body as { refresh_token?: string } | undefined)?.refresh_token;
        const user = refreshUsers.find((u) => u.refreshToken === sent);
        const session = (answer.body as { data?: { refresh_token?: string; access_token?: string } })?.data;
        if (user && answer.status === 200 && session?.refresh_token) {
          usedRefreshTokens.push(user.refreshToken);
          user.refreshToken = session.refresh_token;
        }
      },
    },
    'auth-logout': {
      setup: async () => {
        const [bystander, ...users] = await Promise.all([signUp(), signUp(), signUp(), signUp()]);
        logoutBystander = bystander!;
        logoutUsers.push(...users);
      },
      // only the operation's own sessions end; a schema-invalid request is refused before its session
      // is looked at, and its caller's stays live
      prepare: (t) => caller(t, !t.valid ? logoutBystander : t.happy ? logoutUsers[0]! : t.d.pick(logoutUsers)),
    },
    'auth-forgot-password': {
      setup: async () => {
        forgotUsers.items = await Promise.all([signUp(), signUp()]);
      },
      prepare: async (t) => {
        const u = forgotUsers.take(t, 0.3);
        if (u) await passResendGap(u.phone);
        set(
          t,
          'phone',
          u ? asWritten(slot(t, 'phone')?.phone, u.phone) : asWritten(slot(t, 'phone')?.phone, newPhone().e164),
        );
      },
    },
    'auth-reset-password': {
      setup: async () => {
        resetUsers.items = await Promise.all([signUp(), signUp(), signUp()]);
      },
      prepare: async (t) => {
        const body = t.draft.body as Record<string, unknown>;
        // confirm_password must equal password: the rule the document states in words only
        if (typeof body.password === 'string') body.confirm_password = body.password;
        if (!t.valid) return;
        const u = resetUsers.take(t, 0.5);
        if (!u) return;
        await passResendGap(u.phone);
        ok(await post('auth-forgot-password', { phone: u.phone }), 'auth-forgot-password');
        Object.assign(body, { phone: asWritten(body.phone, u.phone), otp_code: await lastOtp(u.phone) });
      },
    },

    // ---- profile ------------------------------------------------------------------------------
    // one export an hour: the happy request exports, the later valid ones are 429 rate_limited
    'account-export': {
      setup: async () => {
        exportUser = await signUp();
      },
      prepare: (t) => caller(t, exportUser, [w.stranger]),
    },
    // accounts of its own, each deleted once: a code is sent to the one whose deletion is tried
    // (its token sometimes swapped for a stranger's, whose code was never sent); the rest go to a
    // bystander with no live code (403 account_delete_credentials_invalid) and stay
    'account-delete': {
      setup: async () => {
        deleteBystander = await signUp();
        deleteUsers.items = await Promise.all([signUp(), signUp(), signUp()]);
      },
      prepare: async (t) => {
        const u = t.valid ? deleteUsers.take(t, 0.5) : undefined;
        if (!u) return caller(t, deleteBystander!);
        await passResendGap(u.phone);
        ok(await post('auth-send-otp', { context: 'account_delete' }, { token: u.accessToken }), 'auth-send-otp');
        caller(t, u, [w.stranger]);
        Object.assign(t.draft.body as Record<string, unknown>, {
          password: u.password,
          otp_code: await lastOtp(u.phone),
        });
      },
    },
    'profile-get': { prepare: (t) => caller(t, w.payees[1]!) },
    'profile-update': {
      setup: async () => {
        profileUser = await signUp();
      },
      prepare: (t) => caller(t, profileUser),
    },
    'profile-nok-update': {
      setup: async () => {
        nokUser = await signUp();
      },
      prepare: (t) => caller(t, nokUser),
    },
    'profile-public-get': {
      prepare: (t) => {
        swap(t, 'user_id', [w.payees[0]!.id, w.payers[0]!.id, w.stranger.id]);
        caller(t, w.payers[1]!);
      },
    },

    // ---- cards, payout accounts, the wallet -------------------------------------------------------
    'card-add': {
      prepare: async (t) => {
        caller(t, w.payees[2]!, [w.stranger]);
        const body = t.draft.body as Record<string, unknown>;
        if (!t.valid || !swapping(t) || typeof body.authorization_code !== 'string') return;
        // an authorization the provider issued to the card holder (the server asks it; trimmed, as sent)
        await paystack.authorizeUser(w.payees[2]!.id, body.authorization_code.trim());
      },
    },
    'card-list': { prepare: (t) => caller(t, w.payers[1]!) },
    'card-remove': {
      setup: async () => {
        cardUser = await signUp({ tier: 1 });
        cardIds = [await cardOf(cardUser, 1), await cardOf(cardUser, 2), await cardOf(cardUser, 3)];
      },
      prepare: (t) => {
        swap(t, 'card_id', cardIds);
        caller(t, cardUser, [w.stranger]);
      },
    },
    'card-set-default': {
      setup: async () => {
        defaultCardUser = await signUp({ tier: 1 });
        defaultCardIds = [await cardOf(defaultCardUser, 1), await cardOf(defaultCardUser, 2)];
      },
      prepare: (t) => {
        swap(t, 'card_id', defaultCardIds);
        caller(t, defaultCardUser, [w.stranger]);
      },
    },
    'payout-add': {
      setup: async () => {
        addPayoutUser = await signUp({ tier: 1 });
      },
      prepare: async (t) => {
        caller(t, addPayoutUser, [w.stranger]);
        const body = t.draft.body as Record<string, unknown>;
        if (!t.valid || !swapping(t)) return;
        // an account the bank knows, in the name given
        await paystack.registerAccount(String(body.bank_code), String(body.account_number), 'OBI ADA');
        body.account_name = 'Ada Obi';
      },
    },
    // ---- merchants: each creation on a tier-4 user of its own; keys of one owner's merchant ----
    'merchant-create': {
      setup: async () => {
        merchantCreators.items = await Promise.all([1, 2, 3, 4].map(() => signUp({ tier: 4 })));
        merchantOwner = await merchantOwnerOnce();
      },
      prepare: (t) => {
        const u = merchantCreators.take(t);
        caller(t, u ?? merchantOwner, [w.stranger]);
      },
    },
    'merchant-get': {
      setup: async () => void (merchantOwner = await merchantOwnerOnce()),
      prepare: (t) => caller(t, merchantOwner, [w.stranger]),
    },
    'merchant-wallet-get': {
      setup: async () => void (merchantOwner = await merchantOwnerOnce()),
      prepare: (t) => caller(t, merchantOwner, [w.stranger]),
    },
    'merchant-withdraw': {
      // a merchant whose wallet holds its fee on a released escrow, its owner with a payout account
      setup: async () => {
        merchantWithdrawOwner = (await merchantWithFee(2_000, 'Fuzz Payouts')).owner;
        await payoutOf(merchantWithdrawOwner);
      },
      prepare: (t) => {
        caller(t, merchantWithdrawOwner, [w.stranger, merchantOwner ?? w.stranger]);
        // the first one goes to the owner's default account, and fits the wallet
        const body = t.draft.body as Record<string, unknown>;
        if (t.happy) delete body.payout_account_id;
        if (t.happy && typeof body.amount === 'number' && body.amount > 500) body.amount = 100;
      },
    },
    'merchant-key-create': {
      setup: async () => void (merchantOwner = await merchantOwnerOnce()),
      prepare: (t) => caller(t, merchantOwner, [w.stranger]),
    },
    'merchant-key-list': {
      setup: async () => void (merchantOwner = await merchantOwnerOnce()),
      prepare: (t) => caller(t, merchantOwner, [w.stranger]),
    },
    'merchant-key-revoke': {
      setup: async () => {
        merchantKeyOwner = await signUp({ tier: 4 });
        const token = merchantKeyOwner.accessToken;
        ok(await post('merchant-create', { name: 'Fuzz Keys' }, { token }), 'merchant-create', 201);
        for (let i = 0; i < 3; i++) {
          const made = ok(
            await post('merchant-key-create', { name: `key ${i}` }, { token }),
            'merchant-key-create',
            201,
          );
          merchantKeyIds.push(made.body.data.id);
        }
      },
      prepare: (t) => {
        swap(t, 'key_id', merchantKeyIds);
        caller(t, merchantKeyOwner, [w.stranger]);
      },
    },
    // ---- a merchant's webhook endpoints (the owner's session) and deliveries (a key) ----
    'merchant-webhook-create': {
      setup: hooksOnce,
      prepare: (t) => {
        // a URL the document's form admits may still name a private address, which the server refuses
        if (t.valid) set(t, 'url', `https://hooks${t.d.int(0, 999)}.example.com/in`);
        caller(t, hooksOwner, [w.stranger]);
      },
    },
    'merchant-webhook-list': { setup: hooksOnce, prepare: (t) => caller(t, hooksOwner, [w.stranger]) },
    'merchant-webhook-delete': {
      setup: hooksOnce,
      prepare: (t) => {
        swap(t, 'endpoint_id', hookDeleteIds);
        caller(t, hooksOwner, [w.stranger]);
      },
    },
    'merchant-webhook-rotate-secret': {
      setup: hooksOnce,
      prepare: (t) => {
        swap(t, 'endpoint_id', [...hookEndpointIds, hookDeleteIds[3]!]);
        caller(t, hooksOwner, [w.stranger]);
      },
    },
    'merchant-webhook-enable': {
      setup: hooksOnce,
      prepare: (t) => {
        swap(t, 'endpoint_id', hookEndpointIds);
        caller(t, hooksOwner, [w.stranger]);
      },
    },
    'webhook-delivery-list': {
      setup: hooksOnce,
      prepare: (t) => {
        swap(t, 'endpoint_id', hookEndpointIds);
        swap(t, 'before', hookDeliveryIds);
        keyCaller(t, hooksKey, hooksOtherKeys);
      },
    },
    'webhook-delivery-retry': {
      setup: hooksOnce,
      prepare: (t) => {
        swap(t, 'delivery_id', hookDeliveryIds);
        keyCaller(t, hooksKey, hooksOtherKeys);
      },
    },
    'merchant-escrow-create': {
      setup: async () => void (escrowMerchant = await escrowMerchantOnce()),
      prepare: (t) => {
        const body = t.draft.body as Record<string, unknown>;
        if (t.valid && body && typeof body === 'object') {
          // the rules the document states in words: a fee of at most 20% of the amount, two phones
          if (typeof body.merchant_fee === 'number' && typeof body.amount === 'number') {
            // whole naira, below the amounts where ajv's multipleOf refuses valid ones
            body.merchant_fee = Math.min(Math.floor(Math.round(body.amount * 100) / 500), 800_000);
          }
          if (typeof body.buyer_phone === 'string') body.seller_phone = newPhone().e164;
          // a fresh reference on the happy request (a reused one with another body is a 409)
          if (t.happy && typeof body.reference === 'string') body.reference = `fuzz-happy-${Date.now()}`;
        }
        escrowKeyCaller(t);
      },
    },
    'merchant-escrow-get': {
      setup: async () => void (escrowMerchant = await escrowMerchantOnce()),
      prepare: (t) => {
        swap(t, 'escrow_id', escrowMerchant.ids);
        swap(t, 'reference', escrowMerchant.refs);
        escrowKeyCaller(t);
      },
    },
    'merchant-escrow-list': {
      setup: async () => void (escrowMerchant = await escrowMerchantOnce()),
      prepare: (t) => escrowKeyCaller(t),
    },
    'merchant-escrow-cancel': {
      setup: async () => void (escrowMerchant = await escrowMerchantOnce()),
      prepare: (t) => {
        const id = escrowMerchant.cancel.length > 0 && swapping(t) ? escrowMerchant.cancel.shift() : undefined;
        if (id) set(t, 'escrow_id', id);
        escrowKeyCaller(t);
      },
    },
    'merchant-escrow-deliver': {
      setup: async () => void (escrowMerchant = await escrowMerchantOnce()),
      prepare: (t) => {
        const id = escrowMerchant.deliver.length > 0 && swapping(t) ? escrowMerchant.deliver.shift() : undefined;
        if (id) set(t, 'escrow_id', id);
        escrowKeyCaller(t);
      },
    },
    'payout-list': { prepare: (t) => caller(t, w.payers[1]!) },
    'payout-remove': {
      setup: async () => {
        payoutUser = await signUp({ tier: 1 });
        payoutIds = [await payoutOf(payoutUser), await payoutOf(payoutUser), await payoutOf(payoutUser)];
      },
      prepare: (t) => {
        swap(t, 'payout_account_id', payoutIds);
        caller(t, payoutUser, [w.stranger]);
      },
    },
    'payout-set-default': {
      setup: async () => {
        defaultPayoutUser = await signUp({ tier: 1 });
        defaultPayoutIds = [await payoutOf(defaultPayoutUser), await payoutOf(defaultPayoutUser)];
      },
      prepare: (t) => {
        swap(t, 'payout_account_id', defaultPayoutIds);
        caller(t, defaultPayoutUser, [w.stranger]);
      },
    },
    'wallet-get': { prepare: (t) => caller(t, w.payers[1]!) },
    'wallet-topup': {
      setup: async () => {
        topupUser = await signUp({ tier: 3 });
        topupCard = await cardOf(topupUser, 1);
      },
      prepare: (t) => {
        swap(t, 'card_id', [topupCard]);
        caller(t, topupUser, [w.stranger]);
        // within the tier's single limit
        const body = t.draft.body as Record<string, unknown>;
        if (t.happy && typeof body.amount === 'number' && body.amount > 5_000) body.amount = 5_000;
      },
    },
    'wallet-withdraw': {
      setup: async () => {
        withdrawUser = await signUp({ tier: 3 });
        await fundWallet(withdrawUser, 200_000);
        await payoutOf(withdrawUser);
      },
      prepare: (t) => {
        caller(t, withdrawUser, [w.stranger, w.payees[3]!]);
        // the first one goes to the default account, and fits the balance
        const body = t.draft.body as Record<string, unknown>;
        if (t.happy) delete body.payout_account_id;
        if (t.happy && typeof body.amount === 'number' && body.amount > 5_000) body.amount = 1_000;
      },
    },
    'transaction-list': {
      prepare: (t) => {
        swap(t, 'escrow_id', [w.d0.id]);
        caller(t, w.payers[0]!, [w.stranger]);
      },
    },
    'virtual-account-create': {
      setup: async () => {
        vaUsers = await Promise.all([signUp({ tier: 1 }), signUp({ tier: 1 })]);
        vaUsersLater = await Promise.all([signUp({ tier: 1 }), signUp({ tier: 1 })]);
      },
      prepare: (t) => {
        const users = t.phase === 'main' ? vaUsers : vaUsersLater;
        caller(t, t.happy ? users[0]! : t.d.pick(users), [w.stranger]);
      },
    },
    'virtual-account-get': {
      setup: async () => {
        vaHolder = await signUp({ tier: 1 });
        await activeVirtualAccount(vaHolder);
      },
      prepare: (t) => caller(t, vaHolder, [w.stranger]),
    },

    // ---- KYC ------------------------------------------------------------------------------------
    'kyc-start': {
      setup: async () => {
        kycUsers = await Promise.all([signUp(), signUp(), signUp()]);
      },
      prepare: (t) => caller(t, t.happy ? kycUsers[0]! : t.d.pick(kycUsers)),
    },
    'kyc-status': { prepare: (t) => caller(t, w.payers[2]!) },
    'identity-verify': {
      setup: async () => {
        identityUsers = await Promise.all(Array.from({ length: 5 }, () => signUp()));
      },
      prepare: (t) => caller(t, t.happy ? identityUsers[0]! : t.d.pick(identityUsers)),
    },

    // ---- escrows ----------------------------------------------------------------------------
    'escrow-create': {
      prepare: (t) => {
        const i = t.d.int(0, w.payers.length - 1);
        const me = w.payers[i]!;
        const other = w.payees[i]!;
        if (swapping(t)) {
          const roll = t.d.int(0, 9);
          const phone = roll < 8 ? other.phone : me.phone; // sometimes the caller's own number
          set(t, 'counterparty_phone', asWritten(slot(t, 'counterparty_phone')?.counterparty_phone, phone));
        }
        if (t.happy) set(t, 'counterparty_phone', other.phone);
        caller(t, me, [w.stranger]);
      },
    },
    'escrow-get': {
      prepare: (t) => {
        swap(t, 'escrow_id', [w.d0.id]);
        caller(t, t.d.chance(0.5) ? w.d0.initiator : w.d0.counterparty, [w.stranger]);
      },
    },
    'escrow-list': { prepare: (t) => caller(t, w.payers[0]!, [w.stranger]) },
    'escrow-accept': {
      setup: async () => {
        pools['escrow-accept'] = await Promise.all(
          [0, 1, 2].map((i) => deal(...pair(i), { payerRole: 'counterparty' })),
        );
      },
      prepare: (t) => inviteOp(t, pools['escrow-accept']!),
    },
    'escrow-decline': {
      setup: async () => {
        pools['escrow-decline'] = await Promise.all(
          [3, 4, 5].map((i) => deal(...pair(i), { payerRole: 'counterparty' })),
        );
      },
      prepare: (t) => inviteOp(t, pools['escrow-decline']!),
    },
    'escrow-cancel': {
      setup: async () => {
        pools['escrow-cancel'] = await Promise.all([1, 2, 3].map((i) => deal(...pair(i))));
      },
      ...escrowIdOps('escrow-cancel', 'either'),
    },
    'escrow-delete': {
      setup: async () => {
        pools['escrow-delete'] = await Promise.all([2, 3, 4].map((i) => deal(...pair(i))));
      },
      ...escrowIdOps('escrow-delete', 'initiator'),
    },
    'escrow-fund': {
      setup: async () => {
        fundDeals = await Promise.all([0, 1, 2, 3].map((i) => deal(...pair(i))));
        fundDealsLater = await Promise.all([0, 1, 2].map((i) => deal(...pair(i))));
        // every method can succeed: the payers have money, a saved card and an active virtual account
        await Promise.all([...fundDeals, ...fundDealsLater].map(async (d) => {
          fundCards[d.id] = await cardOf(d.payer, 100);
        }));
        for (const p of new Set(fundDeals.map((d) => d.payer))) await activeVirtualAccount(p).catch(() => {});
      },
      prepare: (t) => {
        const deals = t.phase === 'main' ? fundDeals : fundDealsLater;
        const d = t.happy ? deals[0] : t.d.pick(deals);
        if (!d) return;
        // while Paystack is unreachable, the happy ones go to it: a card
        if (t.happy && t.phase !== 'main') {
          const body = t.draft.body as Record<string, unknown>;
          if (body.method !== 'saved_card') delete body.callback_url;
          body.method = t.d.pick(['card', 'saved_card']);
          if (body.method === 'saved_card') body.card_id = fundCards[d.id];
          else delete body.card_id;
        }
        swap(t, 'escrow_id', [d.id]);
        swap(t, 'card_id', [fundCards[d.id]!]);
        caller(t, d.payer, [d.payee, w.stranger]);
      },
    },
    'escrow-deliver': {
      setup: async () => {
        pools['escrow-deliver'] = await Promise.all([4, 5].map((i) => funded(...pair(i))));
      },
      ...escrowIdOps('escrow-deliver', 'payee'),
    },
    'escrow-release': {
      setup: async () => {
        pools['escrow-release'] = await Promise.all([0, 1, 2].map((i) => funded(...pair(i), 'p2p_crypto')));
      },
      ...escrowIdOps('escrow-release', 'payer'),
    },
    'escrow-refund': {
      setup: async () => {
        pools['escrow-refund'] = await Promise.all([3, 4].map((i) => funded(...pair(i))));
      },
      ...escrowIdOps('escrow-refund', 'payee'),
    },

    // ---- disputes ---------------------------------------------------------------------------------
    'dispute-raise': {
      setup: async () => {
        pools['dispute-raise'] = await Promise.all([5, 0, 1].map((i) => funded(...pair(i))));
      },
      ...escrowIdOps('dispute-raise', 'payer'),
    },
    'dispute-get': {
      setup: async () => {
        disputedRead = await disputed(...pair(2));
      },
      prepare: (t) => {
        swap(t, 'escrow_id', [disputedRead.id, w.d0.id]);
        caller(t, disputedRead.payer, [disputedRead.payee, w.stranger]);
      },
    },
    'dispute-propose': {
      setup: async () => {
        proposeDeal = await disputed(...pair(3), 50_000);
      },
      prepare: (t) => {
        swap(t, 'escrow_id', [proposeDeal.id]);
        caller(t, t.d.chance(0.5) ? proposeDeal.payee : proposeDeal.payer, [w.stranger]);
      },
    },
    'dispute-respond': {
      setup: async () => {
        respondDeals = await Promise.all([4, 5].map(async (i) => {
          const d = await disputed(...pair(i));
          const r = ok(
            await post('dispute-propose', { escrow_id: d.id, outcome: 'refund' }, { token: d.payee.accessToken }),
            'dispute-propose',
            201,
          );
          const proposals = r.body.data.proposals as { id: string; status: string }[];
          return { ...d, proposalId: proposals.find((p) => p.status === 'open')!.id };
        }));
      },
      prepare: (t) => {
        const d = t.happy ? respondDeals[0]! : t.d.pick(respondDeals);
        if (swapping(t)) {
          set(t, 'escrow_id', d.id);
          set(t, 'proposal_id', d.proposalId);
        }
        caller(t, d.payer, [d.payee, w.stranger]);
      },
    },
    'dispute-withdraw': {
      setup: async () => {
        pools['dispute-withdraw'] = await Promise.all([0, 1].map((i) => disputed(...pair(i))));
      },
      ...escrowIdOps('dispute-withdraw', 'payer'),
    },
    // ---- the second factor: operators granted a role, not yet enrolled / enrolled, not yet verified
    'admin-totp-enrol': {
      setup: async () => {
        totpEnrolling = await signUp({ first_name: 'Enrol', last_name: 'Fuzz', tier: 3 });
        await grantRoles(totpEnrolling, ['support']);
      },
      prepare: (t) => caller(t, totpEnrolling, [w.payers[0]!, w.stranger]),
    },
    'admin-totp-verify': {
      setup: async () => {
        // one operator per happy request (each code passes once) and one for the rest, whose
        // wrong codes lock its factor
        totpVerifying = await Promise.all([0, 1, 2, 3].map(async () => {
          const u = await signUp({ first_name: 'Verify', last_name: 'Fuzz', tier: 3 });
          await grantRoles(u, ['support']);
          return { user: u, secret: await enrol(u.accessToken) };
        }));
      },
      prepare: async (t) => {
        const op = t.happy ? totpVerifying[totpHappy++ % 3]! : totpVerifying[3]!;
        if (t.happy) set(t, 'code', await codeAt(op.secret));
        caller(t, op.user, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-dispute-list': { prepare: (t) => caller(t, w.admin, [w.payers[0]!]) },
    'admin-search': {
      prepare: (t) => {
        swap(t, 'q', [w.payers[0]!.phone, `0${w.payers[0]!.phone.slice(4)}`, w.d0.id, w.stranger.id]);
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-user-get': {
      prepare: (t) => {
        swap(t, 'user_id', [w.payers[0]!.id, w.stranger.id]);
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-escrow-get': {
      prepare: (t) => {
        swap(t, 'escrow_id', [w.d0.id]);
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-queue-list': { prepare: (t) => caller(t, w.admin, [w.payers[0]!]) },
    'admin-role-grant': {
      setup: async () => {
        grantees = (await Promise.all([0, 1, 2].map(() => eligibleUser()))).map((u) => u.id);
      },
      prepare: (t) => {
        swap(t, 'user_id', grantees);
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-role-revoke': {
      setup: async () => {
        const holders = await Promise.all([0, 1].map(() => eligibleUser()));
        for (const h of holders) await grantRoles(h, ['support', 'finance', 'disputes', 'admin']);
        roleHolders = holders.map((h) => h.id);
      },
      prepare: (t) => {
        swap(t, 'user_id', roleHolders);
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-totp-reset': {
      prepare: (t) => {
        swap(t, 'user_id', roleHolders.length > 0 ? roleHolders : [w.admin.id]);
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-approval-decide': {
      setup: async () => {
        secondAdmin = await newOperator(['admin']);
        await testDb()`
          update private.operators set granted_at = now() - interval '25 hours' where user_id = ${secondAdmin.id}`;
        const targets = await Promise.all([0, 1, 2].map(() => eligibleUser()));
        approvalIds = [];
        for (const u of targets) {
          const r = ok(
            await post('admin-role-grant', { user_id: u.id, role: 'support', reason: 'Joins the support desk' }, {
              token: w.admin.accessToken,
            }),
            'admin-role-grant',
            202,
          );
          approvalIds.push(r.body.data.approval.id);
        }
      },
      prepare: (t) => {
        swap(t, 'approval_id', approvalIds);
        caller(t, secondAdmin, [w.admin, w.payers[0]!, w.stranger]);
      },
    },
    'admin-approval-list': { prepare: (t) => caller(t, w.admin, [w.payers[0]!]) },
    'admin-audit-list': { prepare: (t) => caller(t, w.admin, [w.payers[0]!]) },
    'admin-charge-resolve': {
      setup: async () => {
        heldCharges = await Promise.all([0, 1, 2].map(() => heldCharge()));
      },
      prepare: (t) => {
        swap(t, 'transaction_id', heldCharges);
        caller(t, w.finance, [w.admin, w.stranger]);
      },
    },
    'admin-payout-retry': {
      setup: async () => {
        failedPayouts = await Promise.all([0, 1, 2].map(() => failedPayout()));
      },
      prepare: (t) => {
        swap(t, 'transaction_id', failedPayouts);
        caller(t, w.finance, [w.admin, w.stranger]);
      },
    },
    'admin-dispute-resolve': {
      setup: async () => {
        resolveDeals = await Promise.all([2, 3, 4].map((i) => disputed(...pair(i))));
      },
      prepare: (t) => {
        swap(t, 'dispute_id', resolveDeals.map((d) => d.disputeId));
        caller(t, w.admin, [w.payers[0]!, w.stranger]);
      },
    },
    'admin-user-freeze': {
      setup: async () => {
        await accountOp('finance');
        accountUsers.freeze = (await Promise.all([0, 1].map(() => signUp()))).map((u) => u.id);
      },
      prepare: (t) => {
        swap(t, 'user_id', accountUsers.freeze);
        caller(t, accountOps.finance!, [w.admin, w.stranger]);
      },
    },
    'admin-user-unfreeze': {
      setup: async () => {
        const op = await accountOp('finance');
        accountUsers.unfreeze = (await Promise.all([0, 1].map(() => signUp()))).map((u) => u.id);
        for (const id of accountUsers.unfreeze) {
          await testDb()`select private.user_freeze(${id}, ${op.id}, 'frozen for the fuzz')`;
        }
      },
      prepare: (t) => {
        swap(t, 'user_id', accountUsers.unfreeze);
        caller(t, accountOps.finance!, [w.admin, w.stranger]);
      },
    },
    'admin-session-revoke': {
      setup: async () => {
        await accountOp('support');
        accountUsers.revoke = (await Promise.all([0, 1].map(() => signUp()))).map((u) => u.id);
      },
      prepare: (t) => {
        swap(t, 'user_id', accountUsers.revoke);
        caller(t, accountOps.support!, [w.admin, w.stranger]);
      },
    },
    'admin-sms-resend': {
      setup: async () => {
        await accountOp('support');
        const rows = await testDb()<{ id: string }[]>`
          insert into private.sms_outbox (phone, message, body)
          select ${w.stranger.phone}, '{"kind":"kyc_tier_changed","tier":2,"raised":true}'::jsonb,
                 'Your account is now at tier 2.'
            from generate_series(1, 4)
          returning id::text`;
        smsIds = rows.map((r) => Number(r.id));
      },
      prepare: (t) => {
        if (swapping(t)) set(t, 'sms_id', t.happy ? smsIds[0] : t.d.pick(smsIds));
        caller(t, accountOps.support!, [w.admin, w.stranger]);
      },
    },

    // ---- milestones: hiring escrows, funded -------------------------------------------------------
    'milestone-create': {
      setup: async () => {
        hiring = {} as typeof hiring;
        const [c, u, a, co, r] = await Promise.all(
          [0, 1, 2, 3, 4].map((i) => funded(...pair(i), 'hiring', 50_000)),
        );
        hiring = { create: c!, update: u!, approve: a!, complete: co!, release: r! };
        // proposed by the payee: the payer approves; accepted: the payee completes; completed: the payer releases
        milestoneIds.update = await milestones(hiring.update, hiring.update.payee, 2);
        milestoneIds.approve = await milestones(hiring.approve, hiring.approve.payee, 3);
        const accepted = await milestones(hiring.complete, hiring.complete.payee, 2);
        for (const id of accepted) ok(await milestoneCall('milestone-approve', hiring.complete.payer, id), 'approve');
        milestoneIds.complete = accepted;
        const done = await milestones(hiring.release, hiring.release.payee, 2);
        for (const id of done) {
          ok(await milestoneCall('milestone-approve', hiring.release.payer, id), 'approve');
          ok(await milestoneCall('milestone-complete', hiring.release.payee, id), 'complete');
        }
        milestoneIds.release = done;
      },
      prepare: (t) => {
        swap(t, 'escrow_id', [hiring.create.id, w.d0.id]);
        caller(t, t.d.chance(0.5) ? hiring.create.payee : hiring.create.payer, [w.stranger]);
      },
    },
    'milestone-list': {
      prepare: (t) => {
        swap(t, 'escrow_id', [hiring.create.id]);
        caller(t, hiring.create.payer, [w.stranger]);
      },
    },
    'milestone-update': milestoneOp('update', 'either'),
    'milestone-approve': milestoneOp('approve', 'payer'),
    'milestone-complete': milestoneOp('complete', 'payee'),
    'milestone-release': milestoneOp('release', 'payer'),

    // ---- conversations, notifications, reviews ----------------------------------------------------
    'conversation-list': { prepare: (t) => caller(t, w.payers[0]!) },
    'conversation-read': {
      prepare: (t) => {
        swap(t, 'conversation_id', [w.d0.conversationId]);
        caller(t, w.d0.counterparty, [w.d0.initiator, w.stranger]);
      },
    },
    'message-feed': {
      prepare: (t) => {
        swap(t, 'conversation_id', [w.d0.conversationId]);
        caller(t, w.d0.initiator, [w.d0.counterparty, w.stranger]);
      },
    },
    'message-send': {
      prepare: (t) => {
        swap(t, 'conversation_id', [w.d0.conversationId]);
        caller(t, w.d0.initiator, [w.d0.counterparty, w.stranger]);
      },
    },
    'notification-list': {
      prepare: (t) => {
        swap(t, 'escrow_id', [w.d0.id]);
        caller(t, w.d0.counterparty, [w.stranger]);
      },
    },
    'notification-read': {
      setup: async () => {
        const r = ok(await call('notification-list', { token: w.d0.counterparty.accessToken }), 'notification-list');
        notificationIds = (r.body.data as { id: string }[]).map((n) => n.id);
      },
      prepare: (t) => {
        swap(t, 'notification_id', notificationIds);
        swap(t, 'escrow_id', [w.d0.id]);
        caller(t, w.d0.counterparty, [w.stranger]);
      },
    },
    'review-list': {
      prepare: (t) => {
        swap(t, 'user_id', [w.payees[0]!.id, w.payers[0]!.id]);
        caller(t, w.stranger);
      },
    },
    'review-submit': {
      setup: async () => {
        pools['review-submit'] = await Promise.all([1, 2].map(async (i) => {
          const d = await funded(...pair(i), 'p2p_crypto');
          ok(await escrowCall('escrow-release', d.payer, d.id), 'escrow-release');
          return d;
        }));
      },
      ...escrowIdOps('review-submit', 'either'),
    },

    // ---- signed: the providers' webhooks and the job -----------------------------------------------
    // the payloads are free-form JSON: the fields the server reads are swapped in, with fixtures'
    // references and values of any type, so that each event's code runs on what it may be sent
    'webhook-payments': {
      setup: async () => {
        hookUser = await signUp({ tier: 1 });
        for (const amount of [1_000, 2_500]) {
          const r = ok(await post('wallet-topup', { amount }, { token: hookUser.accessToken }), 'wallet-topup');
          topupRefs.push({ reference: r.body.data.reference, kobo: amount * 100 });
        }
      },
      prepare: (t) => {
        signature(t);
        const body = t.draft.body as Record<string, unknown>;
        if (!swapping(t, 0.6)) return;
        const d = t.d;
        const ref = d.pick(topupRefs);
        const data: Record<string, unknown> = { ...(body.data as Record<string, unknown>) };
        body.event = d.pick(PAYMENT_EVENTS);
        if (d.chance(0.8)) {
          data.reference = d.chance(0.8) ? ref.reference : d.pick([ref.reference.toUpperCase(), 'ref_1']);
        }
        if (d.chance(0.8)) {
          data.amount = d.pick([ref.kobo, ref.kobo + 1, String(ref.kobo), 0, -100, 1.5, 1e21, null, {}]);
        }
        if (d.chance(0.6)) data.currency = d.pick(['NGN', 'ngn', 'USD', '', 7]);
        if (d.chance(0.6)) data.status = d.pick(['success', 'failed', 'abandoned', 1]);
        if (d.chance(0.6)) data.channel = d.pick(['card', 'dedicated_nuban', 'bank_transfer']);
        if (d.chance(0.5)) data.id = d.pick([d.int(1, 2_000_000_000), 'ch_1', -1]);
        if (d.chance(0.5)) {
          data.customer = { email: d.pick([`${hookUser.id}@customers.escrow.ng`, 'x@y.z', 5]), customer_code: 'CUS_x' };
        }
        if (d.chance(0.5)) {
          data.dedicated_account = { account_number: d.pick(['0123456789', 12, '']), bank: { name: 'Wema' } };
        }
        if (d.chance(0.3)) data.authorization = { receiver_bank_account_number: '0123456789', sender_name: 'A B' };
        if (d.chance(0.3)) data.transfer_code = d.pick(['TRF_x', 9]);
        body.data = data;
      },
    },
    'webhook-kyc': {
      setup: async () => {
        kycHookUsers = await Promise.all([signUp(), signUp()]);
      },
      prepare: (t) => {
        signature(t);
        const body = t.draft.body as Record<string, unknown>;
        if (!swapping(t, 0.6)) return;
        const d = t.d;
        body.type = d.pick(['applicantReviewed', 'applicantPending', 'applicantReset', String(body.type)]);
        body.externalUserId = d.pick([kycHookUsers[0]!.id, kycHookUsers[1]!.id.toUpperCase(), 'not-a-user', 42]);
        body.levelName = d.pick(['tier-1', 'tier-2', 'tier-9', null]);
        if (d.chance(0.7)) body.reviewStatus = d.pick(['completed', 'pending', 'onHold']);
        body.reviewResult = {
          reviewAnswer: d.pick(['GREEN', 'RED', 'YELLOW']),
          ...(d.chance(0.5) ? { rejectLabels: d.pick([['FORGERY'], [], 'SELFIE', [1, 'x'.repeat(101)]]) } : {}),
          ...(d.chance(0.5) ? { reviewRejectType: d.pick(['RETRY', 'FINAL', 'SOON']) } : {}),
        };
        if (d.chance(0.8)) body.createdAtMs = d.from(SUMSUB_TIME);
        if (d.chance(0.5)) body.applicantId = d.pick(['app_1', 7]);
      },
    },
    'webhook-identity': {
      setup: async () => {
        const u = await signUp();
        for (const id_number of ['12345678901', '10987654321']) {
          const r = ok(
            await post('identity-verify', { type: 'nin', id_number }, { token: u.accessToken }),
            'identity',
            201,
          );
          identityRefs.push(r.body.data.reference);
        }
      },
      prepare: (t) => {
        signature(t);
        const body = t.draft.body as Record<string, unknown>;
        if (!swapping(t, 0.6)) return;
        const d = t.d;
        body.reference = d.pick(identityRefs);
        body.verificationType = d.pick(['NIN', 'nin', 'BVN', 'DIRECTOR', 'PASSPORT']);
        body.status = d.pick(['found', 'FOUND', 'not_found', 'failed']);
        if (d.chance(0.5)) body.idLast4 = d.pick(['8901', '12345', 1234]);
        if (d.chance(0.5)) body.completedAt = d.from(SUMSUB_TIME);
      },
    },
    [JOBS]: { prepare: signature },
    openapi: {},
  };

  /** accept and decline: by id or by invite token (whichever was generated), the counterparty's. */
  function inviteOp(t: Turn, deals: Deal[]): void {
    const d = t.happy ? deals[0] : t.d.pick(deals);
    if (!d) return;
    if (swapping(t)) {
      set(t, 'escrow_id', d.id);
      set(t, 'invite_token', d.inviteToken);
    }
    caller(t, d.counterparty, [d.initiator, w.stranger]);
  }

  function milestoneOp(which: 'update' | 'approve' | 'complete' | 'release', role: 'payer' | 'payee' | 'either') {
    return {
      prepare: (t: Turn) => {
        const d = hiring[which];
        swap(t, 'milestone_id', milestoneIds[which] ?? []);
        const main = role === 'either' ? (t.d.chance(0.5) ? d.payer : d.payee) : d[role];
        caller(t, main, [d.payer, d.payee, w.stranger]);
      },
    } satisfies Scenario;
  }
}

// ---- the run -------------------------------------------------------------------------------------

interface Failure {
  op: string;
  phase: string;
  valid: boolean;
  mutation?: string;
  status: number;
  problems: string[];
  body: unknown;
  curl: string;
}

/** operation -> 'valid 200' / 'invalid 400' -> count */
const counts = new Map<string, Map<string, number>>();
const failures: Failure[] = [];
const reached2xx = new Set<string>();
/** Each operation's first request (schema-valid, every fixture swapped in) and its answer. */
const firstRequests = new Map<string, { curl: string; status: number; body: unknown }>();
/** The payments webhooks sent, to find the one a kept failure is about. */
const paymentsSent: { body: unknown; curl: string }[] = [];

function record(op: string, valid: boolean, status: number): void {
  const row = counts.get(op) ?? new Map<string, number>();
  const key = `${valid ? 'valid' : 'invalid'} ${status}`;
  row.set(key, (row.get(key) ?? 0) + 1);
  counts.set(op, row);
  if (status >= 200 && status < 300) reached2xx.add(op);
}

async function fuzz(name: string, sc: Scenario, phase: string, runs: number, providerFailing: boolean) {
  const op = fuzzOperation(name);
  const happy = phase === 'main' ? 1 : 3;
  let lastKey: string | undefined;
  for (const [i, d] of draws(seedFor(SEED, `${phase} ${name}`), runs).entries()) {
    const valid = i < happy || d.chance(VALID_SHARE);
    const draft = generate(op, d);
    const t: Turn = { phase, d, draft, valid, happy: i < happy };
    if (op.security === 'bearer') t.draft.token = w.payers[5]!.accessToken;
    try {
      await sc.prepare?.(t);
    } catch (err) {
      failures.push({
        op: name,
        phase,
        valid,
        status: 0,
        problems: [`building the request's fixture failed: ${err instanceof Error ? err.message : String(err)}`],
        body: undefined,
        curl: '(not sent)',
      });
      continue;
    }
    // sometimes the key of the operation's previous request again: a replay, or 409 with another body
    if (op.idempotencyKey && lastKey && !t.happy && t.valid && d.chance(0.1)) {
      draft.headers['Idempotency-Key'] = lastKey;
    }
    if (!valid) mutate(draft, d);
    const verdict = classify(draft);
    if (verdict.valid) lastKey = draft.headers['Idempotency-Key'] ?? lastKey;
    const sent = wire(draft, d);
    const answer = await send(sent);
    if (t.happy) firstRequests.set(name, { curl: curl(sent), status: answer.status, body: answer.body });
    if (name === 'webhook-payments' && sent.raw) paymentsSent.push({ body: JSON.parse(sent.raw), curl: curl(sent) });
    sc.after?.(t, answer);
    if (process.env.FUZZ_DEBUG) {
      console.log(
        name,
        verdict.valid,
        answer.status,
        JSON.stringify(answer.body).slice(0, 200),
        t.draft.token?.slice(-10),
      );
    }
    record(name, verdict.valid, answer.status);
    const problems = judge(op, verdict.valid, answer, providerFailing);
    if (problems.length > 0) {
      failures.push({
        op: name,
        phase,
        valid: verdict.valid,
        mutation: draft.mutation,
        status: answer.status,
        problems,
        body: answer.body,
        curl: curl(sent),
      });
    }
  }
}

/** Runs the tasks, `n` at a time. */
async function inParallel<T>(items: T[], n: number, run: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
  }));
}

function table(): string {
  const ops = [...counts.keys()].sort();
  const lines = ['operation                 | schema-valid: status x count        | schema-invalid: status x count'];
  for (const op of ops) {
    const row = counts.get(op)!;
    const part = (kind: string) =>
      [...row.entries()]
        .filter(([k]) => k.startsWith(`${kind} `))
        .map(([k, n]) => [Number(k.split(' ')[1]), n] as const)
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}x${n}`)
        .join(' ');
    lines.push(`${op.padEnd(25)} | ${part('valid').padEnd(35)} | ${part('invalid')}`);
  }
  const total = [...counts.values()].reduce((n, r) => n + [...r.values()].reduce((a, b) => a + b, 0), 0);
  lines.push(`${total} requests, ${ops.length} operations, seed ${SEED}`);
  return lines.join('\n');
}

function report(f: Failure): string {
  return [
    `✘ ${f.op} (${f.phase}), a schema-${f.valid ? 'valid' : 'invalid'} request${
      f.mutation ? ` (${f.mutation})` : ''
    }, answered ${f.status}:`,
    ...f.problems.map((p) => `    ${p.slice(0, 800).split('\n').join('\n    ')}`),
    `    answer: ${JSON.stringify(f.body)?.slice(0, 600)}`,
    `    ${f.curl}`,
    `    (seed ${SEED}: FUZZ_SEED=${SEED} FUZZ_OPS=${f.op} to rerun this operation)`,
  ].join('\n');
}

describe('the OpenAPI fuzz', () => {
  const names = operationNames().filter(included);
  let sc: Record<string, Scenario>;
  let failuresBefore = 0;

  beforeAll(async () => {
    console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} reruns it), ${RUNS} requests per operation`);
    const [row] = await testDb()<{ last: number }[]>`
      select coalesce(max(id), 0)::int as last from private.webhook_failures`;
    failuresBefore = row?.last ?? 0;
    w = await buildWorld();
    sc = scenarios();
    await inParallel(names, WORKERS, async (name) => {
      await sc[name]?.setup?.();
    });
  }, 120_000);

  it(
    'every schema-valid request gets a 2xx or a refusal of state, every invalid one a 400, every answer as declared',
    async () => {
      const started = Date.now();
      // the main phase: every operation but the job, providers healthy
      await inParallel(
        names.filter((n) => n !== JOBS),
        WORKERS,
        (name) => fuzz(name, sc[name] ?? {}, 'main', RUNS, false),
      );
      // the providers' fakes fail: Paystack is unreachable, the KYC fake refuses or is unreachable
      const failing = names.filter((n) => PROVIDER_OPS[n]);
      await paystack.outage('unavailable', 120);
      try {
        for (const name of failing) {
          if (PROVIDER_OPS[name] === 'kyc') {
            const mode = name === 'kyc-start' ? 'refuse' : 'unavailable';
            await kycFake.fail({ path: '/resources/accessTokens/sdk', mode });
            await kycFake.fail({ path: '/identity/verifications', mode });
          }
          try {
            await fuzz(name, sc[name] ?? {}, 'providers failing', PROVIDER_RUNS, true);
          } finally {
            if (PROVIDER_OPS[name] === 'kyc') await kycFake.clearFail({ path: '/resources/accessTokens/sdk' });
            if (PROVIDER_OPS[name] === 'kyc') await kycFake.clearFail({ path: '/identity/verifications' });
          }
        }
      } finally {
        await paystack.outage('none');
      }
      // the job, last: its clock may end what the others still use
      if (names.includes(JOBS)) await fuzz(JOBS, sc[JOBS]!, 'main', JOB_RUNS, false);
      console.log(`${table()}\n${((Date.now() - started) / 1000).toFixed(1)} s`);
      if (failures.length > 0) {
        console.log(`${failures.length} failures; the first ones:\n${failures.slice(0, 40).map(report).join('\n\n')}`);
      }
      expect(failures.map((f) => `${f.op}: ${f.status} ${f.problems[0]?.split('\n')[0]}`)).toEqual([]);
    },
    240_000,
  );

  it('no payments webhook failed behind its 200 (private.webhook_failures: an error the server kept)', async () => {
    const kept = await testDb()<{ event_type: string; error: string; payload: unknown }[]>`
      select event_type, error, payload from private.webhook_failures where id > ${failuresBefore} order by id`;
    for (const k of kept) {
      const sent = paymentsSent.find((p) => isDeepStrictEqual(p.body, k.payload));
      console.log(
        `✘ webhook-payments kept a failure: ${k.error}\n    ${
          sent?.curl ?? JSON.stringify(k.payload)
        }\n    (seed ${SEED})`,
      );
    }
    expect(kept.map((k) => `${k.event_type}: ${k.error}`)).toEqual([]);
  });

  it('every operation reaches a 2xx', () => {
    const never = names.filter((n) => !reached2xx.has(n));
    for (const name of never) {
      const statuses = [...(counts.get(name) ?? new Map()).entries()].map(([k, n]) => `${k} x${n}`).join(', ');
      const first = firstRequests.get(name);
      console.log(
        `✘ ${name} never answered a 2xx (${statuses}); its first request, with every fixture swapped in, answered ${first?.status}: ${
          JSON.stringify(first?.body)?.slice(0, 400)
        }\n    ${first?.curl}\n    (seed ${SEED}: FUZZ_SEED=${SEED} FUZZ_OPS=${name} to rerun this operation)`,
      );
    }
    expect(never).toEqual([]);
  });
});
