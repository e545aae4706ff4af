// Response schemas: every endpoint declares the `data` of its success envelope
// as a strict zod schema in shared/<area>/schema.ts, the handler's result is typed by it, the builder
// exposes it on `meta`, and the test helpers refuse a real answer that does not match it. This
// file checks the declarations and that the helpers' check really fails on a wrong shape; every
// other suite then checks the real answers it receives (tests/support/responses.ts).
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { endpoint, type EndpointMeta, Reply } from '../../shared/core/endpoint.ts';
import { get, post } from '../support/api.ts';
import { checkAgainstDocument, checkResponseData, endpointMeta, ResponseShapeError } from '../support/responses.ts';
import escrowCancel from '../../supabase/functions/escrow-cancel/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';

const FUNCTIONS = readdirSync(new URL('../../supabase/functions/', import.meta.url), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  valueType?: z.ZodType;
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/**
 * What in a response schema breaks the rules: objects that accept unknown keys, and transforms or
 * defaults (which would make the handler's z.input differ from the z.output a client parses).
 */
function problemsOf(schema: z.ZodType, path = 'data'): string[] {
  const def = defOf(schema);
  switch (def.type) {
    case 'object': {
      const strict = def.catchall !== undefined && defOf(def.catchall).type === 'never';
      const own = strict ? [] : [`${path}: an object that accepts unknown keys (use z.strictObject)`];
      return [...own, ...Object.entries(def.shape ?? {}).flatMap(([k, s]) => problemsOf(s, `${path}.${k}`))];
    }
    case 'array':
      return problemsOf(def.element as z.ZodType, `${path}[]`);
    case 'union':
      return (def.options ?? []).flatMap((o, i) => problemsOf(o, `${path}<${i}>`));
    case 'nullable':
    case 'optional':
      return problemsOf(def.innerType as z.ZodType, path);
    case 'record':
      return problemsOf(def.valueType as z.ZodType, `${path}[key]`);
    case 'pipe':
    case 'transform':
    case 'default':
    case 'prefault':
    case 'catch':
      return [`${path}: a ${def.type} (response schemas describe the wire form: no transforms or defaults)`];
    default:
      return [];
  }
}

const metaOf = async (name: string) => (await endpointMeta(name)) as EndpointMeta;

afterEach(() => {
  vi.unstubAllGlobals();
});

// ---- the declarations ----------------------------------------------------------------------

describe('every endpoint declares its response', () => {
  it.each(FUNCTIONS)('%s: endpoint({ response }) is a strict schema without transforms', async (name) => {
    const meta = await metaOf(name);
    expect(meta, `supabase/functions/${name}/handler.ts must default-export endpoint({...})`).toBeDefined();
    if (meta.stream) {
      // a stream's answer is its events: each one's data is a response schema of its own
      expect(meta.response, `${name}: a stream declares its events' schemas, not a response`).toBeUndefined();
      for (const [event, schema] of Object.entries(meta.stream.events)) {
        expect(problemsOf(schema as z.ZodType), `${name} ${event}`).toEqual([]);
      }
      return;
    }
    expect(meta.response, `${name}: add response: <schema from shared/<area>/schema.ts> to its endpoint({...})`)
      .toBeDefined();
    expect(problemsOf(meta.response as z.ZodType), name).toEqual([]);
  });

  it('meta exposes the schemas and the idempotency flag, read-only, beside the route fields', async () => {
    const { escrowCreateBody, escrowCreateResponse, escrowIdQuery, escrowResponse } = await import(
      '../../shared/escrow/schema.ts'
    );
    const create = await metaOf('escrow-create');
    expect(create).toMatchObject({ name: 'escrow-create', method: 'POST', auth: 'user', status: 201 });
    expect(create.idempotent).toBe(true);
    expect(create.body).toBe(escrowCreateBody);
    expect(create.response).toBe(escrowCreateResponse);
    expect(create.query).toBeUndefined();
    const read = await metaOf('escrow-get');
    expect(read.method).toBe('GET');
    expect(read.idempotent).toBe(false);
    expect(read.query).toBe(escrowIdQuery);
    expect(read.response).toBe(escrowResponse);
    // the enumerable part is the route (what the local server prints and the README table shows)
    expect(Object.keys(read)).toEqual(['name', 'method', 'auth', 'status']);
    expect(() => {
      (read as { response: unknown }).response = z.unknown();
    }).toThrow();
  });
});

// ---- the check the helpers run ---------------------------------------------------------------

const wallet = {
  balance: 1500.5,
  pending_deposits: 0,
  pending_withdrawals: 100,
  currency: 'NGN',
  virtual_account: null,
};

const escrow = {
  id: '0b7c6f1e-3f5a-4c55-9d0e-6a1b2c3d4e5f',
  initiator_id: '1b7c6f1e-3f5a-4c55-9d0e-6a1b2c3d4e5f',
  counterparty_id: null,
  category: 'goods_products',
  payer_role: 'initiator',
  title: 'Used laptop',
  description: '',
  counterparty_phone: '+2348012345678',
  transaction_type: 'goods',
  release_type: 'after_inspection',
  amount: 10000,
  currency: 'NGN',
  status: 'draft',
  inspection_period_days: 1,
  created_at: '2026-11-21T12:00:00.123456Z',
  funded_at: null,
  released_at: null,
  fee_breakdown: {
    escrow_amount: 10000,
    payer_fee: 75,
    vat: 5.63,
    total_charge: 10080.63,
    seller_fee: 75,
    merchant_fee: 0,
    seller_payout: 9925,
  },
  released_amount: 0,
  accepted_at: null,
  delivered_at: null,
  inspection_ends_at: null,
  refunded_at: null,
  cancelled_at: null,
  declined_at: null,
  updated_at: '2026-11-21T12:00:00.123456Z',
  merchant: null,
};

const shapeError = async (name: string, data: unknown): Promise<string> => {
  const err = await checkResponseData(name, data).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `${name} should have refused ${JSON.stringify(data)}`).toBeInstanceOf(ResponseShapeError);
  return (err as Error).message;
};

describe('checkResponseData (run by call(), the webhook deliveries and the e2e invoke helpers)', () => {
  it('accepts answers of the declared shape, nulls included where the spec allows them', async () => {
    await checkResponseData('wallet-get', wallet);
    await checkResponseData('escrow-get', escrow);
    await checkResponseData('escrow-list', [{ ...escrow, conversation_id: escrow.id }]);
    await checkResponseData('webhook-payments', { received: true });
    await checkResponseData('/functions/v1/escrow-get?escrow_id=x', escrow);
  });

  it('refuses a key the schema does not name, naming the endpoint and the key', async () => {
    const message = await shapeError('wallet-get', { ...wallet, secret: 'x' });
    expect(message).toContain('wallet-get');
    expect(message).toContain('secret');
    // escrow-get has no conversation_id; a nested object is strict as well
    expect(await shapeError('escrow-get', { ...escrow, conversation_id: escrow.id })).toContain('conversation_id');
    expect(await shapeError('escrow-get', { ...escrow, fee_breakdown: { ...escrow.fee_breakdown, x: 1 } })).toContain(
      'data.fee_breakdown',
    );
  });

  it('refuses a missing field, a null where none is allowed, a value outside an enum, a bad timestamp', async () => {
    const { currency: _omitted, ...noCurrency } = wallet;
    expect(await shapeError('wallet-get', noCurrency)).toContain('data.currency');
    expect(await shapeError('escrow-list', [escrow])).toContain('data.0.conversation_id');
    expect(await shapeError('escrow-get', { ...escrow, title: null })).toContain('data.title');
    expect(await shapeError('escrow-get', { ...escrow, status: 'frozen' })).toContain('data.status');
    expect(await shapeError('escrow-get', { ...escrow, created_at: 'yesterday' })).toContain('data.created_at');
    expect(await shapeError('webhook-payments', { received: false })).toContain('data.received');
  });

  it('refuses a success answer from a name that is no function', async () => {
    expect(await shapeError('no-such-function', {})).toContain('no-such-function');
  });

  it('call() itself rejects a success answer of the wrong shape (so every suite checks real answers)', async () => {
    const answer = (data: unknown) => async () =>
      new Response(JSON.stringify({ success: true, status: 200, data }), { status: 200 });
    vi.stubGlobal('fetch', vi.fn(answer({ ...wallet, virtual_account: { status: 'frozen' } })));
    await expect(get(walletGet, { token: 't' })).rejects.toThrow(ResponseShapeError);
    await expect(get(walletGet, { token: 't' })).rejects.toThrow(/wallet-get[\s\S]*data\.virtual_account\.status/);
    vi.stubGlobal('fetch', vi.fn(answer(wallet)));
    expect((await get(walletGet, { token: 't' })).body.data).toEqual(wallet);
    // error envelopes are not success answers: left to the test that asked
    const refused = { success: false, status: 401, code: 'unauthenticated', error: 'No' };
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify(refused), { status: 401 })));
    expect((await post(escrowCancel, { escrow_id: escrow.id }, { token: 't' })).body).toEqual(refused);
  });
});

// ---- the types --------------------------------------------------------------------------------

const toyResponse = z.strictObject({
  id: z.string(),
  status: z.enum(['open', 'closed']),
  closed_at: z.string().nullable(),
});

describe('the handler is typed by its response schema', () => {
  it('compiles only when the handler returns the declared shape (tsc checks the @ts-expect-error lines)', async () => {
    const good = endpoint({
      name: 'toy-typed',
      method: 'GET',
      auth: 'none',
      response: toyResponse,
      // an inline literal needs `as const` (the real handlers return what a typed shared function returns)
      handler: async () => ({ id: 'a', status: 'open' as const, closed_at: null }),
    });
    endpoint({
      name: 'toy-reply',
      method: 'POST',
      auth: 'none',
      status: 201,
      response: toyResponse,
      handler: async () => new Reply(200, { id: 'a', status: 'closed' as const, closed_at: '2026-01-01T00:00:00Z' }),
    });
    endpoint({
      name: 'toy-missing',
      method: 'GET',
      auth: 'none',
      response: toyResponse,
      // @ts-expect-error closed_at is missing
      handler: async () => ({ id: 'a', status: 'open' as const }),
    });
    endpoint({
      name: 'toy-enum',
      method: 'GET',
      auth: 'none',
      response: toyResponse,
      // @ts-expect-error 'frozen' is not one of the statuses
      handler: async () => ({ id: 'a', status: 'frozen' as const, closed_at: null }),
    });
    endpoint({
      name: 'toy-null',
      method: 'GET',
      auth: 'none',
      response: toyResponse,
      // @ts-expect-error id may not be null
      handler: async () => ({ id: null, status: 'open' as const, closed_at: null }),
    });
    endpoint({
      name: 'toy-bad-reply',
      method: 'POST',
      auth: 'none',
      response: toyResponse,
      // @ts-expect-error a Reply carries the declared shape too
      handler: async () => new Reply(200, { id: 1 }),
    });
    expect(good.meta.response).toBe(toyResponse);
  });

  it('the builder does not parse answers at run time (the helpers and the types are the guard)', async () => {
    // TypeScript lets a value with more properties than declared through (structural typing):
    // that, and values no type describes, is what the helpers' strict check catches
    const answer = { id: 'a', status: 'open' as const, closed_at: null, extra: true };
    const lying = endpoint({
      name: 'toy-lying',
      method: 'GET',
      auth: 'none',
      response: toyResponse,
      handler: async () => answer,
    });
    const res = await lying(new Request('http://localhost/functions/v1/toy-lying'));
    expect(res.status).toBe(200);
    expect((await res.json()).data).toEqual({ id: 'a', status: 'open', closed_at: null, extra: true });
  });
});

describe('checkAgainstDocument (every answer, refusals included, against docs/api/openapi.json)', () => {
  const CODES: Record<number, string> = {
    400: 'validation_failed',
    403: 'kyc_limit_exceeded',
    405: 'method_not_allowed',
    409: 'escrow_wrong_state',
    503: 'service_unavailable',
  };
  const refusal = (status: number, error = 'cannot release an escrow that is released', code = CODES[status]) => ({
    success: false,
    status,
    code,
    error,
  });

  it('passes a declared refusal whose body is the error envelope of that status', () => {
    expect(() => checkAgainstDocument('escrow-release', 'POST', 409, refusal(409))).not.toThrow();
    const replayed = new Headers({ 'Idempotent-Replayed': 'true' });
    expect(() => checkAgainstDocument('escrow-fund', 'POST', 403, refusal(403, 'over'), replayed)).not.toThrow();
  });

  it('fails a code the operation does not declare under that status', () => {
    expect(() => checkAgainstDocument('escrow-release', 'POST', 409, refusal(409, 'x', 'insufficient_funds'))).toThrow(
      ResponseShapeError,
    );
    expect(() => checkAgainstDocument('escrow-release', 'POST', 409, refusal(409, 'x', 'kyc_limit_exceeded'))).toThrow(
      ResponseShapeError,
    );
  });

  it('fails a status the operation does not declare', () => {
    expect(() => checkAgainstDocument('wallet-get', 'GET', 409, refusal(409))).toThrow(
      /wallet-get answered 409, a status docs\/api\/openapi.json does not declare/,
    );
  });

  it('fails a body whose status is not the answer’s, or that is not the envelope', () => {
    expect(() => checkAgainstDocument('escrow-release', 'POST', 409, refusal(400))).toThrow(ResponseShapeError);
    expect(() => checkAgainstDocument('escrow-release', 'POST', 409, { ...refusal(409), hint: 'x' })).toThrow(
      ResponseShapeError,
    );
    expect(() => checkAgainstDocument('escrow-release', 'POST', 200, { success: true, status: 200, data: {} }))
      .toThrow(/does not match docs\/api\/openapi.json/);
  });

  it('fails a Retry-After or Idempotent-Replayed the status does not declare', () => {
    const retry = new Headers({ 'Retry-After': '2' });
    expect(() => checkAgainstDocument('escrow-release', 'POST', 409, refusal(409), retry)).toThrow(/retry-after/);
    const replayed = new Headers({ 'Idempotent-Replayed': 'true' });
    expect(() => checkAgainstDocument('wallet-get', 'GET', 503, refusal(503, 'down'), replayed)).toThrow(
      /idempotent-replayed/,
    );
  });

  it('leaves an answer to another method alone (a 405 is not the operation’s), but not a function missing from it', () => {
    expect(() => checkAgainstDocument('escrow-release', 'GET', 405, refusal(405))).not.toThrow();
    expect(() => checkAgainstDocument('no-such-function', 'POST', 200, {})).toThrow(/has no \/no-such-function/);
  });
});
