// The OpenAPI document states every rule the server enforces on a request: a request valid against
// an operation's request schemas (its query parameters and its body, docs/api/openapi.json) is never
// refused with 400 by the server's validation, and the invalid requests below are refused by both.
// "The server" is parseInput from shared/core/endpoint.ts, the very function every endpoint runs on
// its query and body (the control rule, then the endpoint's zod schema); the document is compiled
// by ajv (JSON Schema 2020-12, strict, multipleOfPrecision as docs/openapi.md advises). Examples per
// rule are written by hand; fast-check adds random strings, numbers, ids and URLs.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { parseInput } from '../../shared/core/endpoint.ts';
import { HttpError } from '../../shared/core/http.ts';
import {
  excludesControl,
  HTTP_URL_PATTERN,
  HTTPS_URL_PATTERN,
  INVISIBLE_CLASS,
  nameText,
  NO_CONTROL_PATTERN,
  textPattern,
  TIMESTAMP_PATTERN,
} from '../../shared/core/validation.ts';
import { hasAtMostTwoDecimals } from '../../shared/core/money.ts';
import { endpointMeta } from '../support/responses.ts';
import {
  bodySchema,
  documentAccepts,
  type Json,
  operation,
  querySchema,
  requestAjv as ajv,
  type Where,
} from '../support/openapi-requests.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const names = readdirSync(`${root}supabase/functions`, { withFileTypes: true })
  .filter((e) => e.isDirectory() && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(e.name))
  .map((e) => e.name)
  .sort();

// ---- the document's request schemas (tests/support/openapi-requests.ts), and the server's check ----

const metas = new Map<string, EndpointMeta>();

/** A query as it travels: every value a string. */
const asQueryString = (query: Json) => Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));

/** Does the server's validation (parseInput, as every endpoint runs it) accept it? */
function serverAccepts(name: string, where: Where, value: unknown): boolean {
  const meta = metas.get(name);
  const schema = where === 'query' ? meta?.query : meta?.body;
  if (!schema) throw new Error(`${name} takes no ${where}`);
  try {
    parseInput(schema, where === 'query' ? asQueryString(value as Json) : value, where);
    return true;
  } catch (err) {
    if (err instanceof HttpError && err.status === 400) return false;
    throw err;
  }
}

/** Both verdicts on one request, with what to print when they disagree. */
function verdicts(name: string, where: Where, value: unknown) {
  return {
    document: documentAccepts(name, where, value),
    server: serverAccepts(name, where, value),
    toString: () => `${name} ${where} ${JSON.stringify(value)}`,
  };
}

function expectBoth(name: string, where: Where, value: unknown, accepted: boolean): void {
  const v = verdicts(name, where, value);
  const what = `${v}: document ${v.document}, server ${v.server}`;
  expect(v.document, what).toBe(accepted);
  expect(v.server, what).toBe(accepted);
}

/** The goal: whatever the document accepts, the server accepts. */
function expectDocumentImpliesServer(name: string, where: Where, value: unknown): void {
  const v = verdicts(name, where, value);
  if (v.document) expect(v.server, `${v}: the document accepts it, the server refuses it`).toBe(true);
}

// ---- valid examples: one per operation whose query or body cannot be empty ---------------------

const U = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const PHONE = '08031234567';

const VALID: Record<string, { query?: Json; body?: Json }> = {
  'admin-dispute-list': { query: { status: 'escalated', limit: 10, after: '2026-01-01T00:00:00Z' } },
  'admin-dispute-resolve': {
    body: { dispute_id: U, outcome: 'split', payee_amount: 19.99, resolution: 'Both sides agreed to halve it.' },
  },
  'admin-approval-decide': { body: { approval_id: U, decision: 'approve', reason: 'The provider confirmed it.' } },
  'admin-escrow-get': { query: { escrow_id: U, reason: 'The payer says the seller never delivered.' } },
  'admin-search': { query: { q: PHONE } },
  'admin-approval-list': { query: { status: 'pending', limit: 10, after: U } },
  'admin-audit-list': { query: { operator_id: U, target_id: U, action: 'role.grant', limit: 10, after: '42' } },
  'admin-role-grant': { body: { user_id: U, role: 'finance', reason: 'Joins the finance desk on Monday.' } },
  'admin-role-revoke': { body: { user_id: U, role: 'finance', reason: 'Left the company last Friday.' } },
  'admin-totp-reset': { body: { user_id: U, reason: 'Lost the phone with the authenticator.' } },
  'admin-charge-resolve': { body: { transaction_id: U, reason: 'The provider confirmed the payment.' } },
  'admin-payout-retry': { body: { transaction_id: U, reason: 'The provider confirmed the failure.' } },
  'admin-user-freeze': { body: { user_id: U, reason: 'Fraud reported by the issuing bank.' } },
  'admin-user-unfreeze': { body: { user_id: U, reason: 'The bank withdrew its fraud report.' } },
  'admin-session-revoke': { body: { user_id: U, reason: 'The user reports a stolen phone.' } },
  'admin-sms-resend': { body: { sms_id: 4821, reason: 'The user says it never arrived.' } },
  'admin-totp-verify': { body: { code: '287082' } },
  'admin-user-get': { query: { user_id: U, reason: 'The user called about a payout.' } },
  'account-delete': { body: { password: 'a sound passphrase', otp_code: '287082' } },
  'auth-forgot-password': { body: { phone: PHONE } },
  'auth-refresh': { body: { refresh_token: 'rt_0123456789' } },
  'auth-reset-password': {
    body: {
      phone: '+2348031234567',
      otp_code: '123456',
      password: 'a sound passphrase',
      confirm_password: 'a sound passphrase',
    },
  },
  'auth-send-otp': { body: { phone: PHONE, context: 'signup' } },
  'auth-signup': { body: { phone: PHONE, first_name: 'Ada', last_name: 'Obi', password: 'a sound passphrase' } },
  'auth-verify': { body: { phone: PHONE, otp_code: '123456', context: 'login', password: 'a sound passphrase' } },
  'card-add': {
    body: {
      authorization_code: 'AUTH_x1',
      last4: '4081',
      brand: 'visa',
      exp_month: '12',
      exp_year: '2030',
      signature: 'SIG_x1',
      bank: 'Test Bank',
    },
  },
  'card-remove': { body: { card_id: U } },
  'card-set-default': { body: { card_id: U } },
  'conversation-list': { query: { limit: 20, before: '2026-01-01T10:00:00.123456+01:00' } },
  'conversation-read': { body: { conversation_id: U } },
  'dispute-get': { query: { escrow_id: U } },
  'dispute-propose': { body: { escrow_id: U, outcome: 'release' } },
  'dispute-raise': { body: { escrow_id: U, reason_code: 'other', reason: 'The parcel never arrived.' } },
  'dispute-respond': { body: { escrow_id: U, proposal_id: U, accept: true } },
  'dispute-withdraw': { body: { escrow_id: U } },
  'escrow-accept': { body: { escrow_id: U } },
  'escrow-cancel': { body: { escrow_id: U } },
  'escrow-create': {
    body: {
      category: 'goods_products',
      payer_role: 'initiator',
      title: 'A used phone',
      counterparty_phone: '08031234568',
      amount: 5000,
      description: 'Black, 128 GB\nwith its case',
    },
  },
  'escrow-decline': { body: { invite_token: 'abcdefghijklmnopqrstuvwxyz012345' } },
  'escrow-delete': { body: { escrow_id: U } },
  'escrow-deliver': { body: { escrow_id: U } },
  'escrow-fund': { body: { escrow_id: U, method: 'card', callback_url: 'https://app.escrow.ng/funded' } },
  'escrow-get': { query: { escrow_id: U } },
  'escrow-list': { query: { status: 'active', limit: 5 } },
  'escrow-refund': { body: { escrow_id: U } },
  'escrow-release': { body: { escrow_id: U } },
  'identity-verify': { body: { type: 'nin', id_number: '123 4567 8901' } },
  'kyc-start': { body: { level: 1 } },
  'events-stream': { query: { ticket: `est_${'a'.repeat(43)}`, last_event_id: '42' } },
  'message-feed': { query: { conversation_id: U, limit: 50, after: '2026-01-01T00:00:00Z' } },
  'merchant-create': { body: { name: 'Ada Phones 24' } },
  'merchant-key-create': { body: { name: 'production server' } },
  'merchant-key-revoke': { body: { key_id: U } },
  'merchant-webhook-create': { body: { url: 'https://hooks.example.com/escrow', event_types: ['escrow.funded'] } },
  'merchant-webhook-delete': { body: { endpoint_id: U } },
  'merchant-webhook-enable': { body: { endpoint_id: U } },
  'merchant-webhook-rotate-secret': { body: { endpoint_id: U } },
  'webhook-delivery-list': { query: { endpoint_id: U, status: 'failed', limit: 50, before: U } },
  'webhook-delivery-retry': { body: { delivery_id: U } },
  'merchant-escrow-create': {
    body: {
      reference: 'order-1042',
      category: 'goods_products',
      title: 'Phone 15',
      amount: 100_000_000,
      buyer_phone: '08012345678',
      seller_phone: '+2348087654321',
      metadata: { order: '1042' },
    },
  },
  'merchant-escrow-get': { query: { escrow_id: U } },
  'merchant-escrow-list': { query: { status: 'draft', limit: 50 } },
  'merchant-escrow-cancel': { body: { escrow_id: U } },
  'merchant-escrow-deliver': {
    body: {
      escrow_id: U,
      tracking: { carrier: 'GIG Logistics', number: 'GIG-1042', url: 'https://track.example.com/GIG-1042' },
    },
  },
  'message-send': { body: { conversation_id: U, content: 'Hello 👋', message_type: 'text' } },
  'milestone-approve': { body: { milestone_id: U } },
  'milestone-complete': { body: { milestone_id: U } },
  'milestone-create': { body: { escrow_id: U, title: 'First half', amount: 0.29, due_date: '2028-02-29' } },
  'milestone-list': { query: { escrow_id: U } },
  'milestone-release': { body: { milestone_id: U } },
  'milestone-update': { body: { milestone_id: U, description: null } },
  'notification-list': { query: { escrow_id: U, limit: 10, unread_only: true } },
  'notification-read': { body: { escrow_id: U } },
  'payout-add': {
    body: { bank_code: '058', bank_name: 'GTBank', account_number: '0123456789', account_name: 'Ada Obi' },
  },
  'payout-remove': { body: { payout_account_id: U } },
  'payout-set-default': { body: { payout_account_id: U } },
  'profile-nok-update': {
    body: {
      first_name: 'Ngozi',
      last_name: 'Obi',
      phone: '+44 20 7946 0958',
      address: '1 Marina, Lagos',
      relationship: 'sister',
    },
  },
  'profile-public-get': { query: { user_id: U } },
  'profile-update': { body: { bio: '' } },
  'review-list': { query: { user_id: U, limit: 20 } },
  'review-submit': { body: { escrow_id: U, rating: 5, feedback: null } },
  'transaction-list': { query: { category: 'escrow', escrow_id: U, status: 'pending', limit: 100 } },
  'wallet-topup': { body: { amount: 100, card_id: U } },
  'wallet-withdraw': { body: { amount: 1000.07, reason: 'rent' } },
  'merchant-withdraw': { body: { amount: 1000.07, payout_account_id: U } },
  'webhook-identity': {
    body: { reference: 'idv_1', verificationType: 'NIN', status: 'verified', extra: { nested: ['ok\n', 1, null] } },
  },
  'webhook-kyc': { body: { type: 'applicantReviewed', reviewResult: { reviewAnswer: 'GREEN' } } },
  'webhook-payments': {
    body: { event: 'charge.success', data: { reference: U, amount: 500000, metadata: { a: [1, null, true] } } },
  },
};

/** Each (operation, query or body) the document has, with its valid example. */
const inputs: { name: string; where: Where; valid: Json }[] = [];

beforeAll(async () => {
  for (const name of names) {
    const meta = await endpointMeta(name);
    if (!meta) throw new Error(`supabase/functions/${name}/handler.ts exports no endpoint`);
    metas.set(name, meta);
    for (const where of ['query', 'body'] as const) {
      const takes = where === 'query' ? querySchema(name) : bodySchema(name);
      // where nothing is required, the empty one is the example (the test below checks it is valid)
      if (takes) inputs.push({ name, where, valid: VALID[name]?.[where] ?? {} });
    }
  }
});

/** The top-level properties of an input's schema (a query's parameters, a body's fields). */
function propertiesOf(name: string, where: Where): [string, Json][] {
  const schema = where === 'query' ? querySchema(name) : bodySchema(name);
  return Object.entries((schema?.properties ?? {}) as Record<string, Json>);
}

/** The schema of a property, with a nullable's string or number branch (anyOf [x, null]) taken. */
function branch(schema: Json): Json {
  const anyOf = schema.anyOf as Json[] | undefined;
  return anyOf?.find((s) => s.type !== 'null') ?? schema;
}

/** Every (input, field) whose schema matches `pick`. */
function fields(
  pick: (schema: Json) => boolean,
): { name: string; where: Where; valid: Json; field: string; schema: Json }[] {
  return inputs.flatMap(({ name, where, valid }) =>
    propertiesOf(name, where)
      .filter(([, s]) => pick(branch(s)))
      .map(([field, s]) => ({ name, where, valid, field, schema: branch(s) }))
  );
}

const isString = (s: Json) => s.type === 'string' && !('enum' in s) && !('const' in s);
const isUuid = (s: Json) => s.format === 'uuid';
const isAmount = (s: Json) => s.multipleOf === 0.01;
const isTimestamp = (s: Json) => s.format === 'date-time';
const isDate = (s: Json) => s.format === 'date';
const isUrl = (s: Json) => s.format === 'uri';
/** A trimmed text that must not be blank: its pattern needs a character that is not white space. */
const isSolidText = (s: Json) => typeof s.pattern === 'string' && s.pattern.includes('[^\\s\\u0000');

// ---- the tests ---------------------------------------------------------------------------------

describe('request rules: the document and the server', () => {
  it('every example here is of an operation that takes that query or body', () => {
    const taking = new Set(inputs.map((i) => `${i.name} ${i.where}`));
    const examples = Object.entries(VALID).flatMap(([name, v]) => Object.keys(v).map((w) => `${name} ${w}`));
    expect(examples.filter((e) => !taking.has(e))).toEqual([]);
    expect(taking.size).toBe(examples.length + 1); // the one whose body may be empty: the job's clock
  });

  it('every request schema compiles under strict ajv (2020-12), and every valid example is accepted by both', () => {
    expect(inputs.length).toBeGreaterThan(50);
    for (const { name, where, valid } of inputs) expectBoth(name, where, valid, true);
  });

  it('states the control rule on every string of every request (as its pattern, or beside its own)', () => {
    const strings: string[] = [];
    const walk = (s: unknown, at: string): void => {
      if (Array.isArray(s)) return s.forEach((x, i) => walk(x, `${at}/${i}`));
      if (s === null || typeof s !== 'object') return;
      const o = s as Json;
      if (isString(o)) {
        const patterns = [o.pattern, ...((o.allOf ?? []) as Json[]).map((x) => x.pattern)];
        expect(patterns.some((p) => typeof p === 'string' && excludesControl(p)), at).toBe(true);
        strings.push(at);
      }
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    for (const name of names) {
      walk(bodySchema(name), `${name} body`);
      walk(querySchema(name), `${name} query`);
    }
    expect(strings.length).toBeGreaterThan(100);
  });

  it('refuses a control character (but tab, line feed, carriage return) in every string field, on both sides', () => {
    const all = fields(isString);
    expect(all.length).toBeGreaterThan(100);
    for (const { name, where, valid, field } of all) {
      for (const c of ['\u0000', '\u0001', '\u0008', '\u000b', '\u000c', '\u001b', '\u001f']) {
        expectBoth(name, where, { ...valid, [field]: `${String(valid[field] ?? 'x')}${c}` }, false);
      }
    }
    // keys and values at any depth of free-form JSON (a webhook's payload) too
    const hook = VALID['webhook-payments']!.body!;
    expectBoth('webhook-payments', 'body', { ...hook, data: { 'k\u0001': 1 } }, false);
    expectBoth('webhook-payments', 'body', { ...hook, data: { list: [{ deep: 'a\u0000' }] } }, false);
    expectBoth('webhook-payments', 'body', { ...hook, ['extra\u0002']: true }, false);
    expectBoth('webhook-payments', 'body', { ...hook, data: { list: [{ deep: 'tab\there\r\n' }] } }, true);
    // tab, line feed and carriage return are text
    expectBoth('escrow-create', 'body', { ...VALID['escrow-create']!.body, title: 'line one\r\n\tline two' }, true);
    expectBoth('message-send', 'body', { ...VALID['message-send']!.body, content: 'a\tb\nc\rd' }, true);
  });

  it("states a merchant's name rules in the document as the server checks them", () => {
    const name = (n: string, ok: boolean) => expectBoth('merchant-create', 'body', { name: n }, ok);
    name('Ada Phones 24', true);
    name('  Ada Phones  ', true); // trimmed
    name('Polka Dot Company', true);
    for (
      const bad of [
        'www adaphones',
        'Visit HTTPS adaphones',
        'adaphones dot com',
        'Ada Phones dot NG',
        'Call 08031234567',
        'Call 0803 123 4567',
        'adaphones.com',
        'Ada/Phones',
        'Ada\u200bPhones', // zero-width space
        'Ada\u202ePhones', // right-to-left override
        'Аda Phones', // a Cyrillic A
        'A',
        'x'.repeat(41),
      ]
    ) name(bad, false);
  });

  it('refuses a blank or empty text where one is required, on both sides; white space around is trimmed', () => {
    const solid = fields(isSolidText);
    expect(solid.map((f) => `${f.name}.${f.field}`)).toEqual(
      expect.arrayContaining([
        'auth-signup.first_name',
        'escrow-create.title',
        'message-send.content',
        'dispute-raise.reason',
      ]),
    );
    for (const { name, where, valid, field } of solid) {
      for (const blank of ['', ' ', '   ', '\t\n', '\u00a0\u3000\ufeff', '\u2028']) {
        expectBoth(name, where, { ...valid, [field]: blank }, false);
      }
    }
    // the bounds hold once trimmed: reason is 10 to 2000 characters
    const raise = VALID['dispute-raise']!.body!;
    expectBoth('dispute-raise', 'body', { ...raise, reason: '  a        b  ' }, true);
    expectBoth('dispute-raise', 'body', { ...raise, reason: '   abcdefghi   ' }, false);
    // the document's maxLength counts the spaces sent: never looser than the server
    const padded = { ...raise, reason: ` ${'x'.repeat(2000)}` };
    expect(documentAccepts('dispute-raise', 'body', padded)).toBe(false);
    expect(serverAccepts('dispute-raise', 'body', padded)).toBe(true);
    expectBoth('auth-signup', 'body', { ...VALID['auth-signup']!.body, first_name: '  Ada  ' }, true);
  });

  it('counts characters as code points, as JSON Schema does: an emoji is one', () => {
    const create = VALID['escrow-create']!.body!;
    expectBoth('escrow-create', 'body', { ...create, title: '😀'.repeat(200) }, true);
    expectBoth('escrow-create', 'body', { ...create, title: '😀'.repeat(201) }, false);
    expectBoth('auth-signup', 'body', { ...VALID['auth-signup']!.body, password: '🔑'.repeat(128) }, true);
    expectBoth('auth-signup', 'body', { ...VALID['auth-signup']!.body, password: '🔑'.repeat(7) }, false);
    expectBoth('escrow-accept', 'body', { invite_token: '🎟'.repeat(150) }, true);
    expectBoth('message-send', 'body', { ...VALID['message-send']!.body, content: '💬'.repeat(4000) }, true);
    expectBoth('message-send', 'body', { ...VALID['message-send']!.body, content: '💬'.repeat(4001) }, false);
  });

  it('amounts: multipleOf 0.01 within the bounds; 0.07, 0.29 and 19.99 are valid, 5000.001 and 5000.0000000001 are not', () => {
    const amounts = fields(isAmount);
    expect(amounts.map((f) => `${f.name}.${f.field}`).sort()).toEqual([
      'admin-dispute-resolve.payee_amount',
      'dispute-propose.payee_amount',
      'escrow-create.amount',
      'merchant-escrow-create.amount',
      'merchant-escrow-create.merchant_fee',
      'merchant-withdraw.amount',
      'milestone-create.amount',
      'milestone-update.amount',
      'wallet-topup.amount',
      'wallet-withdraw.amount',
    ]);
    const withAmount = (valid: Json, field: string, amount: number) =>
      field === 'payee_amount' ? { ...valid, outcome: 'split', [field]: amount } : { ...valid, [field]: amount };
    for (const { name, where, valid, field, schema } of amounts) {
      const min = schema.minimum as number;
      const fine = min < 1 ? [0.07, 0.29, 19.99, 0.01, 99_999_999.99, 100_000_000] : [1000.07, 1000.29, 1019.99, min];
      // a merchant's fee is at most 20% of its amount (a rule the document states in words): the valid
      // example's amount is the largest, so the fees up to a fifth of it are tried
      const fitting = field === 'merchant_fee' ? fine.filter((a) => a * 5 <= (valid.amount as number)) : fine;
      for (const amount of fitting) expectBoth(name, where, withAmount(valid, field, amount), true);
      for (const amount of [5000.001, 5000.0000000001, 19.999, 0.005, -5, 100_000_000.01, min - 0.01]) {
        expectBoth(name, where, withAmount(valid, field, amount), false);
      }
    }
  });

  it('amounts: the server keeps exactly the numbers whose shortest decimal form has at most 2 decimals', () => {
    const decimalRule = (n: number) => /^-?[0-9]+(\.[0-9]{1,2})?$/.test(String(n));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 1, max: 10_000_000_000 }).map((k) => k / 100),
          fc.double({ min: 0.01, max: 100_000_000, noNaN: true }),
          fc.tuple(fc.integer({ min: 1, max: 10_000_000_000 }), fc.constantFrom(1e-3, 1e-9)).map(([k, d]) =>
            k / 100 + d
          ),
        ),
        (n) => {
          const ok = serverAccepts('escrow-create', 'body', { ...VALID['escrow-create']!.body, amount: n });
          expect(ok, String(n)).toBe(decimalRule(n));
          expect(hasAtMostTwoDecimals(n), String(n)).toBe(decimalRule(n));
          // ajv with multipleOfPrecision 8 (|amount / 0.01 - its nearest integer| <= 1e-8) accepts
          // every valid amount below NGN 894,784.94, and refuses every number clearly off (1e-7 naira)
          const ajvOk = documentAccepts('escrow-create', 'body', { ...VALID['escrow-create']!.body, amount: n });
          if (ok && n < 894_784.94) expect(ajvOk, String(n)).toBe(true);
          if (Math.abs(n - Math.round(n * 100) / 100) > 1e-7) expect(ajvOk, String(n)).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('uuids: every 8-4-4-4-12 hex id of any version or case is accepted by both; other shapes by neither', () => {
    const ids = fields(isUuid);
    expect(ids.length).toBeGreaterThan(30);
    const good = [
      'c232ab00-9414-11ec-b3c8-9f6bdeced846', // v1
      '000003e8-7b2c-21ee-b200-325096b39f47', // v2
      '6fa459ea-ee8a-3ca4-894e-db77e160355e', // v3
      '3f2504e0-4f89-41d3-9a0c-0305e82c3301', // v4
      '886313e1-3b8a-5372-9b90-0c9aee199e5d', // v5
      '1ec9414c-232a-6b00-b3c8-9f6bdeced846', // v6
      '017f22e2-79b0-7cc3-98c4-dc0c0c07398f', // v7
      '320c3d4d-cc00-875b-8ec9-32d5f69181c0', // v8
      '00000000-0000-0000-0000-000000000000', // nil
      'ffffffff-ffff-ffff-ffff-ffffffffffff', // max
      'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
      '3F2504E0-4F89-41D3-9A0C-0305E82C3301', // upper case
      '3f2504e0-4f89-01d3-1a0c-0305e82c3301', // version 0, variant 0
      '3f2504e0-4f89-f1d3-ca0c-0305e82c3301', // version f, variant c
    ];
    const bad = [
      'not-a-uuid',
      '',
      '3f2504e04f8941d39a0c0305e82c3301',
      '{3f2504e0-4f89-41d3-9a0c-0305e82c3301}',
      'urn:uuid:3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      '3f2504e0-4f89-41d3-9a0c-0305e82c330',
      '3f2504e0-4f89-41d3-9a0c-0305e82c33011',
      '3g2504e0-4f89-41d3-9a0c-0305e82c3301',
      ' 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      '3f2504e0-4f89-41d3-9a0c-0305e82c3301\n',
    ];
    for (const { name, where, valid, field } of ids) {
      // where exactly one of two ids is sent, the field alone; a saved card is paid with method saved_card
      const base = bodySchema(name)?.oneOf
        ? {}
        : name === 'escrow-fund' && field === 'card_id'
        ? { escrow_id: U, method: 'saved_card' }
        : valid;
      for (const id of good) expectBoth(name, where, { ...base, [field]: id }, true);
      for (const id of bad) expectBoth(name, where, { ...base, [field]: id }, false);
    }
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(hex, (h) => {
        const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        expectBoth('escrow-get', 'query', { escrow_id: id }, true);
      }),
      { numRuns: 300 },
    );
  });

  it('timestamps and dates: what Postgres reads, on both sides (no year 0000, offsets under 16 hours)', () => {
    const stamps = fields(isTimestamp);
    expect(stamps.length).toBeGreaterThanOrEqual(9);
    for (const { name, where, valid, field } of stamps) {
      const at = (v: string) => ({
        ...valid,
        [field]: v,
        ...(field === 'before' && 'after' in valid ? { after: undefined } : {}),
      });
      for (const v of ['2026-01-01T00:00:00Z', '0001-01-01T00:00:00+15:59', '2024-02-29T23:59:59.123456789-05:30']) {
        expectBoth(name, where, JSON.parse(JSON.stringify(at(v))), true);
      }
      for (
        const v of [
          '0000-01-01T00:00:00Z',
          '2026-01-01T00:00:00+16:00',
          '2026-01-01T00:00:00-23:59',
          '2026-01-01t00:00:00z',
          '2026-01-01T00:00:00',
          '2026-01-01 00:00:00Z',
          '2026-01-01T00:00:00+0100',
          '2026-01-01T00:00Z',
          '2026-02-29T00:00:00Z',
          '2026-01-01T23:59:60Z',
          '2026-01-01',
        ]
      ) {
        expectBoth(name, where, JSON.parse(JSON.stringify(at(v))), false);
      }
    }
    const dates = fields(isDate);
    expect(dates.map((f) => `${f.name}.${f.field}`)).toEqual([
      'milestone-create.due_date',
      'milestone-update.due_date',
    ]);
    for (const { name, where, valid, field } of dates) {
      for (const v of ['0001-01-01', '2028-02-29', '2000-02-29', '0004-02-29', '9999-12-31']) {
        expectBoth(name, where, { ...valid, [field]: v }, true);
      }
      for (
        const v of [
          '0000-01-01',
          '0000-02-29',
          '2027-02-29',
          '1900-02-29',
          '2026-13-01',
          '2026-1-01',
          '2026-01-01T00:00:00Z',
        ]
      ) {
        expectBoth(name, where, { ...valid, [field]: v }, false);
      }
    }
    // every year, month, day and offset: the pattern keeps exactly the real dates from 0001, offsets under 16 hours
    const re = new RegExp(TIMESTAMP_PATTERN, 'u');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 1, max: 13 }),
        fc.integer({ min: 1, max: 32 }),
        fc.integer({ min: -23, max: 23 }),
        (y, m, d, off) => {
          const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
          const s = `${pad(y, 4)}-${pad(m)}-${pad(d)}T12:00:00${off < 0 ? '-' : '+'}${pad(off)}:00`;
          const real = m <= 12 && d <= new Date(Date.UTC(2000, m, 0)).getUTCDate() &&
            !(m === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)));
          expect(re.test(s), s).toBe(y >= 1 && real && Math.abs(off) < 16);
          expectBoth('escrow-list', 'query', { before: s }, re.test(s));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('URLs: http(s) with a plain host, on both sides; every URL the pattern admits is a URI and a URL', () => {
    const urls = fields(isUrl);
    expect(urls.map((f) => `${f.name}.${f.field}`).sort()).toEqual([
      'escrow-fund.callback_url',
      'merchant-webhook-create.url',
      'profile-update.avatar_url',
      'wallet-topup.callback_url',
    ]);
    // a webhook URL has the server's address rules besides the form (the test after this one)
    for (const { name, where, valid, field } of urls.filter((f) => f.name !== 'merchant-webhook-create')) {
      // avatar_url is https only (other users' apps load it): an http one is refused on both sides
      const httpsOnly = field === 'avatar_url';
      for (
        const v of [
          'https://app.escrow.ng/funded?x=1#y',
          'https://cdn.example.com/a%20b.png',
          'HTTPS://localhost',
          'https://my_host.example.com:8443/p/a/t/h;v=1?q=(1)&r=*#frag/?',
        ]
      ) expectBoth(name, where, { ...valid, [field]: v }, true);
      for (const v of ['http://127.0.0.1:54321/cb', 'HTTP://localhost']) {
        expectBoth(name, where, { ...valid, [field]: v }, !httpsOnly);
      }
      for (
        const v of [
          'ftp://example.com/x',
          'javascript:alert(1)',
          '/relative/path.png',
          'https://',
          'http:example.com',
          'https://user@example.com/',
          'https://[::1]/',
          'https://xn--zz.example/',
          'https://example.com:65536/',
          'https://1.2.3.999/',
          'https://example.123/',
          'https://example.com/a b',
          'https://example.com/{x}',
          ' https://example.com/',
          `https://example.com/${'a'.repeat(2048)}`,
          'not a url',
          '',
        ]
      ) expectBoth(name, where, { ...valid, [field]: v }, false);
    }
    const re = new RegExp(HTTP_URL_PATTERN, 'u');
    const uri = ajv.compile({ type: 'string', format: 'uri' });
    const label = fc.stringMatching(/^[A-Za-z0-9_]{1,5}(-[A-Za-z0-9_]{1,3})?$/);
    const top = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,5}(-[A-Za-z0-9_]{1,3})?$/);
    const host = fc.oneof(
      fc.tuple(fc.array(label, { maxLength: 3 }), top).map(([ls, t]) => [...ls, t].join('.')),
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.')),
    );
    const rest = fc.stringMatching(
      /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%\/-]{0,12})?(\?[A-Za-z0-9=&?\/%]{0,8})?(#[a-z\/?]{0,5})?$/,
    );
    fc.assert(
      fc.property(fc.constantFrom('http', 'https', 'HTTPS'), host, fc.option(fc.nat(65535)), rest, (s, h, p, r) => {
        const url = `${s}://${h}${p === null ? '' : `:${p}`}${r}`;
        if (!re.test(url)) return; // a stray % not followed by two hex digits
        expect(uri(url), url).toBe(true);
        expect(() => new URL(url), url).not.toThrow();
        expect(new URL(url).protocol, url).toMatch(/^https?:$/);
        expectBoth('wallet-topup', 'body', { amount: 100, callback_url: url }, true);
      }),
      { numRuns: 500 },
    );
  });

  it("merchant-webhook-create's url: the document's URL form, and the address rules the server adds", () => {
    const url = (u: string) => verdicts('merchant-webhook-create', 'body', { url: u });
    // the form, on both sides
    for (const u of ['https://hooks.example.com/escrow?x=1', 'https://203.0.114.9:8443/in']) {
      expect(url(u), u).toMatchObject({ document: true, server: true });
    }
    for (const u of ['https://user:pw@hooks.example.com/in', 'ftp://hooks.example.com/', 'hooks.example.com']) {
      expect(url(u), u).toMatchObject({ document: false, server: false });
    }
    // what depends on the deployment (shared/merchants/webhook-schema.ts webhookUrlProblem, tested in
    // tests/unit/merchant-webhooks.test.ts): a literal address that is not public is refused by the
    // server only; the document states the form
    for (const u of ['https://10.0.0.7/in', 'https://169.254.169.254/latest', 'https://100.64.0.1/']) {
      expect(url(u), u).toMatchObject({ document: true, server: false });
    }
  });

  it('random text in every string field: what the document accepts, the server accepts', () => {
    const unit = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...'abcXYZ019 -_.+@/:') },
      { weight: 2, arbitrary: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u3000', '\ufeff') },
      { weight: 1, arbitrary: fc.constantFrom('\u0000', '\u0001', '\u000b', '\u000c', '\u001f', '\u007f', '\u0085') },
      { weight: 1, arbitrary: fc.constantFrom('é', 'ñ', '😀', '𝔸', 'ı', 'ſ') },
      // bidirectional controls and invisible characters: refused in names and titles only
      { weight: 1, arbitrary: fc.constantFrom('\u202e', '\u2066', '\u200b', '\u200f', '\u061c', '\u2060') },
    );
    const text = fc.string({ unit, maxLength: 24 });
    let accepted = 0;
    for (const { name, where, valid, field } of fields(isString)) {
      fc.assert(
        fc.property(text, (s) => {
          // confirm_password must equal password: a rule JSON Schema cannot state (its description says it)
          const same = name === 'auth-reset-password' && ['password', 'confirm_password'].includes(field);
          const value = same ? { ...valid, password: s, confirm_password: s } : { ...valid, [field]: s };
          expectDocumentImpliesServer(name, where, value);
          if (documentAccepts(name, where, value)) accepted++;
        }),
        { numRuns: 40 },
      );
    }
    expect(accepted).toBeGreaterThan(500);
  });
});

// ---- rules between fields: every combination, the same verdict on both sides --------------------

/** Every subset of `keys`. */
const subsets = <T>(keys: readonly T[]): T[][] =>
  keys.reduce<T[][]>((acc, k) => [...acc, ...acc.map((s) => [...s, k])], [[]]);

describe('request rules: rules between fields', () => {
  it('auth-verify: password with context login only, and required with it', () => {
    const base = { phone: PHONE, otp_code: '123456' };
    for (const context of ['signup', 'login']) {
      for (const password of [undefined, 'a sound passphrase']) {
        const body = JSON.parse(JSON.stringify({ ...base, context, password }));
        expectBoth('auth-verify', 'body', body, (context === 'login') === (password !== undefined));
      }
    }
  });

  it('dispute-propose and admin-dispute-resolve: payee_amount with outcome split only, and required with it', () => {
    for (const name of ['dispute-propose', 'admin-dispute-resolve']) {
      const base = { ...VALID[name]!.body };
      delete base.payee_amount;
      for (const outcome of ['release', 'refund', 'split']) {
        for (const payee of [undefined, 250.5]) {
          const body = JSON.parse(JSON.stringify({ ...base, outcome, payee_amount: payee }));
          expectBoth(name, 'body', body, (outcome === 'split') === (payee !== undefined));
        }
      }
    }
  });

  it('escrow-fund: card_id with saved_card only (and required with it), callback_url with card only', () => {
    for (const method of ['wallet', 'card', 'saved_card', 'bank_transfer']) {
      for (const extra of subsets(['card_id', 'callback_url'] as const)) {
        const body: Json = { escrow_id: U, method };
        if (extra.includes('card_id')) body.card_id = U;
        if (extra.includes('callback_url')) body.callback_url = 'https://app.escrow.ng/funded';
        const ok = (method === 'saved_card') === extra.includes('card_id') &&
          (!extra.includes('callback_url') || method === 'card');
        expectBoth('escrow-fund', 'body', body, ok);
      }
    }
  });

  it('identity-verify: id_number by type, bank_code with bank_account only, rc_number with director only', () => {
    const numbers: Record<string, string> = {
      nin: '123 4567 8901',
      bvn: '12345678901',
      cac: 'rc 1234567',
      tin: '12345678-0001',
      bank_account: '0123456789',
      director: ' 1234567890 1 ',
    };
    const fits = (type: string, id: string) => {
      const compact = id.replace(/\s/g, '').toUpperCase();
      return {
        nin: /^[0-9]{11}$/,
        bvn: /^[0-9]{11}$/,
        cac: /^(RC|BN|IT|LP|LLP)?[0-9]{1,8}$/,
        tin: /^(?:[0-9]{8}-?[0-9]{4}|[0-9]{10})$/,
        bank_account: /^[0-9]{10}$/,
        director: /^[0-9]{11}$/,
      }[type]!.test(compact);
    };
    let combos = 0;
    for (const type of Object.keys(numbers)) {
      for (const id of [...Object.values(numbers), 'RC12345678', 'LLP1', '1234567890', '123456789012', 'abc']) {
        for (const extra of subsets(['bank_code', 'rc_number'] as const)) {
          for (const rc of ['RC 123456', 'XY123']) {
            const body: Json = { type, id_number: id };
            if (extra.includes('bank_code')) body.bank_code = '058';
            if (extra.includes('rc_number')) body.rc_number = rc;
            const ok = fits(type, id) &&
              (type === 'bank_account') === extra.includes('bank_code') &&
              (type === 'director') === extra.includes('rc_number') &&
              (!extra.includes('rc_number') || fits('cac', rc));
            expectBoth('identity-verify', 'body', body, ok);
            combos++;
          }
        }
      }
    }
    expect(combos).toBe(6 * 11 * 4 * 2);
  });

  it('escrow-accept, escrow-decline and notification-read: exactly one of two ids', () => {
    const pairs: [string, Json, Json][] = [
      ['escrow-accept', { escrow_id: U }, { invite_token: 'abcdefghijklmnopqrstuvwxyz012345' }],
      ['escrow-decline', { escrow_id: U }, { invite_token: 'abcdefghijklmnopqrstuvwxyz012345' }],
      ['notification-read', { notification_id: U }, { escrow_id: U }],
    ];
    for (const [name, a, b] of pairs) {
      expectBoth(name, 'body', {}, false);
      expectBoth(name, 'body', a, true);
      expectBoth(name, 'body', b, true);
      expectBoth(name, 'body', { ...a, ...b }, false);
    }
  });

  it('message-feed: before or after, not both (the query’s x-query-schema)', () => {
    expect(operation('message-feed')['x-query-schema']).toMatchObject({ not: { required: ['before', 'after'] } });
    const t = '2026-01-01T00:00:00Z';
    for (const extra of subsets(['before', 'after'] as const)) {
      const query: Json = { conversation_id: U, ...Object.fromEntries(extra.map((k) => [k, t])) };
      expectBoth('message-feed', 'query', query, extra.length < 2);
    }
  });

  it('profile-update: at least one field (minProperties 1); phone and phone_number never', () => {
    expect(bodySchema('profile-update')).toMatchObject({ minProperties: 1 });
    expect(operation('profile-update').requestBody.required).toBe(true);
    expectBoth('profile-update', 'body', {}, false);
    for (const field of ['first_name', 'bio', 'address', 'username', 'storage_path']) {
      expectBoth('profile-update', 'body', { [field]: 'Ada_Obi' }, true);
    }
    expectBoth('profile-update', 'body', { phone: PHONE }, false);
    expectBoth('profile-update', 'body', { phone_number: PHONE, bio: 'x' }, false);
  });

  it('milestone-update: milestone_id and at least one field to change', () => {
    const changes = { title: 'Second half', description: null, amount: 10, due_date: null, changes_note: 'later' };
    for (const keys of subsets(Object.keys(changes))) {
      const body = { milestone_id: U, ...Object.fromEntries(keys.map((k) => [k, changes[k as keyof typeof changes]])) };
      expectBoth('milestone-update', 'body', body, keys.length > 0);
    }
  });

  it('auth-reset-password: confirm_password must equal password, which the document says in words', () => {
    const schema = bodySchema('auth-reset-password') as { properties: Record<string, Json> };
    expect(schema.properties.confirm_password?.description).toMatch(/equal password/);
    const body = VALID['auth-reset-password']!.body!;
    expect(serverAccepts('auth-reset-password', 'body', { ...body, confirm_password: 'another passphrase' })).toBe(
      false,
    );
  });
});

describe('request rules: the helpers', () => {
  it('nameText: its pattern keeps exactly what the server keeps, bidirectional controls and invisible characters refused', () => {
    const unit = fc.constantFrom(
      'a',
      ' ',
      '\u00a0',
      '😀',
      '\u0001',
      '\u061c',
      '\u200b',
      '\u200c',
      '\u200d',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202e',
      '\u2060',
      '\u2066',
      '\u2069',
      '\ufeff',
      '\u2028',
      '\u200a', // hair space: white space, not invisible
    );
    const schema = nameText(1, 10);
    const pattern = new RegExp(textPattern(1, INVISIBLE_CLASS), 'u');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 12 }), (s) => {
        // deno-lint-ignore no-control-regex -- the control characters are the subject
        const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(s);
        const invisible = /[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/.test(s);
        const trimmed = [...s.trim()].length;
        const server = !control && schema.safeParse(s).success;
        expect(pattern.test(s), JSON.stringify(s)).toBe(server);
        expect(server, JSON.stringify(s)).toBe(!control && !invisible && trimmed >= 1 && trimmed <= 10);
      }),
      { numRuns: 3000 },
    );
  });

  it('excludesControl proves the patterns the document uses, and nothing that lets a control character through', () => {
    for (
      const p of [
        NO_CONTROL_PATTERN,
        textPattern(1),
        textPattern(10),
        '^[0-9]{6}$',
        '^(\\+234[0-9]{10}|0[0-9]{10})$',
        '^\\+?[0-9][0-9 -]{4,}[0-9-]$',
        HTTP_URL_PATTERN,
        HTTPS_URL_PATTERN,
        textPattern(1, INVISIBLE_CLASS),
        textPattern(0, INVISIBLE_CLASS),
        TIMESTAMP_PATTERN,
        '^[\\t\\n\\r a-z]+$',
      ]
    ) expect(excludesControl(p), p).toBe(true);
    for (
      const p of [
        '^.*$',
        '^\\s*$',
        '^\\S+$',
        '^[^a]+$',
        '^[\\u0000-\\u007f]+$',
        '^[\\x01]$',
        '^\\v$',
        '^\\D+$',
        '^[ -~\\f]$',
      ]
    ) {
      expect(excludesControl(p), p).toBe(false);
    }
  });

  it('the text patterns keep exactly the strings the server keeps once trimmed (min 1 and min 10)', () => {
    const unit = fc.constantFrom('a', 'b', ' ', '\t', '\n', '\u00a0', '\u3000', '😀', '\u0001');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 16 }), (s) => {
        // deno-lint-ignore no-control-regex -- the control characters are the subject
        const noControl = !/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(s);
        const trimmed = [...s.trim()].length;
        expect(new RegExp(textPattern(1), 'u').test(s), JSON.stringify(s)).toBe(noControl && trimmed >= 1);
        expect(new RegExp(textPattern(10), 'u').test(s), JSON.stringify(s)).toBe(noControl && trimmed >= 10);
      }),
      { numRuns: 2000 },
    );
  });
});
