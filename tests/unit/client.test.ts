// The typed client (clients/typescript, @escrow-service/client). Its types are generated from the
// OpenAPI document by `npm run openapi`; these tests fail when the committed clients/typescript/schema.ts
// is not what the generator makes of the committed docs/api/openapi.json, when the package's manifest
// drifts from the repository (openapi-fetch's pin, the entry points its build produces), when the
// README's examples are not example*.ts (which tests/e2e runs, or tsc compiles), and when the
// client's own behaviour changes: the token, the Idempotency-Key, unwrap() and EscrowApiError, here
// against a fetch of the test's own. The `@ts-expect-error` lines below are checked by `tsc --noEmit`
// (npm test's type check): each must stay an error, so the client keeps refusing wrong calls.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type Body,
  createEscrowClient,
  createMerchantClient,
  type Data,
  type ErrorEnvelope,
  EscrowApiError,
  type Query,
  unwrap,
} from '../../clients/typescript/index.ts';
import { CLIENT_SCHEMA_PATH, clientSchema } from '../../scripts/lib/client-schema.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (p: string) => readFileSync(`${root}${p}`, 'utf8');

/** A fetch that records each request and answers with `answer(request)`. */
function fakeFetch(answer: (request: Request) => Response | Promise<Response>) {
  const requests: Request[] = [];
  const fetch = async (request: Request) => {
    requests.push(request.clone());
    return await answer(request);
  };
  return { fetch, requests };
}

const envelope = (status: number, data: unknown) => Response.json({ success: true, status, data }, { status });
const refusal = (status: number, error: string, details?: { field: string; message: string }[], headers = {}) =>
  Response.json({ success: false, status, error, ...(details ? { details } : {}) }, { status, headers });

const BASE = 'http://127.0.0.1:1/functions/v1';
const ESCROW_ID = '0b5c3a52-3f4e-4d6a-9a8b-6c7d8e9f0a1b';

describe('the generated types', () => {
  it('clients/typescript/schema.ts is what npm run openapi generates from docs/api/openapi.json', async () => {
    const generated = await clientSchema(read('docs/api/openapi.json'));
    expect(
      read(CLIENT_SCHEMA_PATH) === generated,
      `${CLIENT_SCHEMA_PATH} is stale: run \`npm run openapi\` and commit it`,
    ).toBe(true);
  }, 30_000);

  it('cover every operation of the document', () => {
    const document = JSON.parse(read('docs/api/openapi.json')) as { paths: Record<string, unknown> };
    const schema = read(CLIENT_SCHEMA_PATH);
    const missing = Object.keys(document.paths).filter((p) => !schema.includes(`  '${p}': {`));
    expect(missing).toEqual([]);
  });
});

describe('the package', () => {
  const pkg = JSON.parse(read('clients/typescript/package.json'));
  const rootPkg = JSON.parse(read('package.json'));
  const build = JSON.parse(read('clients/typescript/tsconfig.build.json'));

  it('is an ES module package named @escrow-service/client with a version', () => {
    expect(pkg.name).toBe('@escrow-service/client');
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.type).toBe('module');
    expect(pkg.private, 'a package meant to be packed and published').toBeUndefined();
  });

  it('depends on openapi-fetch exactly as the repository pins it, and on nothing else', () => {
    expect(Object.keys(pkg.dependencies)).toEqual(['openapi-fetch']);
    expect(pkg.dependencies['openapi-fetch']).toBe(rootPkg.devDependencies['openapi-fetch']);
    expect(pkg.devDependencies.typescript, "the build uses the repository's TypeScript").toBe(
      rootPkg.devDependencies.typescript,
    );
    expect(pkg.engines.node).toBe(rootPkg.engines.node);
  });

  it('exports what its prepack build writes, and packs only that', () => {
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
    expect(build.compilerOptions.outDir).toBe('dist');
    expect(build.compilerOptions.declaration).toBe(true);
    expect(build.files).toEqual(['index.ts', 'schema.ts']);
    expect(pkg.exports['.']).toEqual({
      types: './dist/index.d.ts',
      import: './dist/index.js',
      default: './dist/index.js',
    });
    expect(pkg.files).toEqual(['dist/']);
  });

  // example.ts: sign-up and an escrow; example-chat.ts: a chat screen on the live stream (both run
  // by tests/e2e); example-eventsource.ts: a browser's EventSource with a ticket (compiled by tsc);
  // example-merchant.ts and example-merchant-receiver.ts: a merchant's server (tests/e2e)
  const examples = readdirSync(`${root}clients/typescript`).filter((f) => /^example.*\.ts$/.test(f));
  it('has the five examples', () =>
    expect(examples.sort()).toEqual([
      'example-chat.ts',
      'example-eventsource.ts',
      'example-merchant-receiver.ts',
      'example-merchant.ts',
      'example.ts',
    ]));
  it.each(examples)(
    'its README shows %s as it is (importing the package by name)',
    (file) => {
      const example = read(`clients/typescript/${file}`).split('\n');
      const code = example.slice(example.findIndex((l) => l.startsWith('import '))).join('\n').trim()
        .replace(`'./index.ts'`, `'@escrow-service/client'`);
      const blocks = [...read('clients/typescript/README.md').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
        (m[1] as string).trim()
      );
      expect(blocks, `clients/typescript/README.md: copy ${file} (from its import) into a block`).toContain(code);
    },
  );
});

describe('createEscrowClient', () => {
  it('calls /<operation> under baseUrl with the query, the JSON body and the bearer token', async () => {
    const { fetch, requests } = fakeFetch(() => envelope(200, []));
    const api = createEscrowClient({ baseUrl: `${BASE}/`, accessToken: 'tok-1', fetch });
    await api.GET('/transaction-list', { params: { query: { status: 'pending', limit: 5 } } });
    await api.POST('/escrow-deliver', { body: { escrow_id: ESCROW_ID } });
    const [get, post] = requests as [Request, Request];
    expect(get.method).toBe('GET');
    expect(get.url).toBe(`${BASE}/transaction-list?status=pending&limit=5`);
    expect(get.headers.get('authorization')).toBe('Bearer tok-1');
    expect(post.method).toBe('POST');
    expect(post.url).toBe(`${BASE}/escrow-deliver`);
    expect(post.headers.get('content-type')).toBe('application/json');
    expect(await post.json()).toEqual({ escrow_id: ESCROW_ID });
  });

  it('asks a token function before every request, and leaves an Authorization of the call alone', async () => {
    const { fetch, requests } = fakeFetch(() => envelope(200, {}));
    const session: { token?: string } = {};
    const api = createEscrowClient({ baseUrl: BASE, accessToken: () => session.token, fetch });
    await api.GET('/wallet-get');
    session.token = 'fresh';
    await api.GET('/wallet-get');
    await api.GET('/wallet-get', { headers: { Authorization: 'Bearer mine' } });
    expect(requests.map((r) => r.headers.get('authorization'))).toEqual([null, 'Bearer fresh', 'Bearer mine']);
  });

  it('sends the Idempotency-Key given as a header parameter', async () => {
    const { fetch, requests } = fakeFetch(() => envelope(200, {}));
    const api = createEscrowClient({ baseUrl: BASE, fetch, headers: { apikey: 'anon' } });
    await api.POST('/wallet-topup', { params: { header: { 'Idempotency-Key': 'key-1' } }, body: { amount: 500 } });
    expect(requests[0]?.headers.get('idempotency-key')).toBe('key-1');
    expect(requests[0]?.headers.get('apikey')).toBe('anon');
  });
});

describe('createMerchantClient', () => {
  it("sends the merchant's key as the bearer token", async () => {
    const { fetch, requests } = fakeFetch(() => envelope(200, []));
    const apiKey = `esk_test_${'a1B2'.repeat(10)}`;
    const api = createMerchantClient({ baseUrl: BASE, apiKey, fetch });
    await api.GET('/merchant-escrow-list', { params: { query: { limit: 5 } } });
    expect(requests[0]?.url).toBe(`${BASE}/merchant-escrow-list?limit=5`);
    expect(requests[0]?.headers.get('authorization')).toBe(`Bearer ${apiKey}`);
  });

  it('refuses what is not a key (a session token, an endpoint secret) before sending anything', () => {
    const { fetch, requests } = fakeFetch(() => envelope(200, []));
    for (const apiKey of ['eyJhbGciOiJIUzI1NiJ9.e30.sig', 'whsec_abc', 'esk_prod_abc', '', 'esk_live_ab cd']) {
      expect(() => createMerchantClient({ baseUrl: BASE, apiKey, fetch })).toThrow(TypeError);
    }
    expect(requests).toHaveLength(0);
  });
});

describe('unwrap', () => {
  it('returns the data of a success envelope, typed by the operation', async () => {
    const wallet = { balance: 10, pending_deposits: 0, pending_withdrawals: 0, currency: 'NGN', virtual_account: null };
    const { fetch } = fakeFetch(() => envelope(200, wallet));
    const api = createEscrowClient({ baseUrl: BASE, fetch });
    const data = await unwrap(api.GET('/wallet-get'));
    const balance: number = data.balance;
    expect(balance).toBe(10);
    expect(data).toEqual(wallet);
  });

  it('returns a bare answer as it is (the openapi document)', async () => {
    const { fetch } = fakeFetch(() => Response.json({ openapi: '3.1.0' }));
    const api = createEscrowClient({ baseUrl: BASE, fetch });
    expect(await unwrap(api.GET('/openapi'))).toEqual({ openapi: '3.1.0' });
  });

  it('throws an EscrowApiError with the status, the message, the details and the response', async () => {
    const details = [{ field: 'title', message: 'is required' }, { field: 'amount', message: 'must be positive' }];
    const { fetch } = fakeFetch(() => refusal(400, 'Validation failed', details, { 'retry-after': '7' }));
    const api = createEscrowClient({ baseUrl: BASE, fetch });
    const error = await unwrap(api.POST('/wallet-topup', { body: { amount: 1 } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EscrowApiError);
    expect(error).toBeInstanceOf(Error);
    const e = error as EscrowApiError;
    expect(e.name).toBe('EscrowApiError');
    expect(e.message).toBe('400 Validation failed');
    expect(e.error).toBe('Validation failed');
    expect(e.status).toBe(400);
    expect(e.details).toEqual(details);
    expect(e.fields).toEqual(['amount', 'title']);
    expect(e.requestId).toBeUndefined();
    expect(e.body).toEqual({ success: false, status: 400, error: 'Validation failed', details });
    expect(e.response.headers.get('retry-after')).toBe('7');
  });

  it('carries the request id of a 500, and the text of an answer that is not JSON', async () => {
    const api500 = createEscrowClient({
      baseUrl: BASE,
      fetch: fakeFetch(() =>
        Response.json({ success: false, status: 500, error: 'Internal error', request_id: 'req-9' }, { status: 500 })
      ).fetch,
    });
    const e500 = (await unwrap(api500.GET('/wallet-get')).catch((e: unknown) => e)) as EscrowApiError;
    expect([e500.status, e500.requestId, e500.details]).toEqual([500, 'req-9', []]);
    const api502 = createEscrowClient({
      baseUrl: BASE,
      fetch: fakeFetch(() => new Response('Bad gateway', { status: 502 })).fetch,
    });
    const e502 = (await unwrap(api502.GET('/wallet-get')).catch((e: unknown) => e)) as EscrowApiError;
    expect([e502.status, e502.error, e502.body]).toEqual([502, '502 Bad gateway', 'Bad gateway']);
  });
});

describe('the types refuse wrong calls (checked by tsc --noEmit)', () => {
  it('compiles only calls the document allows', async () => {
    const { fetch } = fakeFetch(() => envelope(200, {}));
    const api = createEscrowClient({ baseUrl: BASE, fetch });
    const escrow = {
      category: 'goods_products',
      payer_role: 'initiator',
      title: 'A phone',
      counterparty_phone: '08031234567',
      amount: 25_000,
    } satisfies Body<'escrow-create'>;
    await api.POST('/escrow-create', { body: escrow });
    // @ts-expect-error -- amount is a number of naira, not a string
    await api.POST('/escrow-create', { body: { ...escrow, amount: '25000' } });
    // @ts-expect-error -- a category outside the enum
    await api.POST('/escrow-create', { body: { ...escrow, category: 'houses' } });
    // @ts-expect-error -- title is required
    await api.POST('/escrow-create', { body: { category: 'hiring', payer_role: 'initiator', amount: 1 } });
    // @ts-expect-error -- escrow-get needs its escrow_id query parameter
    await api.GET('/escrow-get', {});
    // @ts-expect-error -- escrow_id is a string (a uuid)
    await api.GET('/escrow-get', { params: { query: { escrow_id: 42 } } });
    // @ts-expect-error -- escrow-accept takes no Idempotency-Key
    await api.POST('/escrow-accept', { params: { header: { 'Idempotency-Key': 'k' } }, body: { invite_token: 't' } });
    // @ts-expect-error -- no such operation
    await api.POST('/escrow-destroy', {});
    // @ts-expect-error -- wallet-get is a GET
    await api.POST('/wallet-get', {});

    const query: Query<'transaction-list'> = { status: 'pending' };
    // @ts-expect-error -- a status the list does not know
    const wrongQuery: Query<'transaction-list'> = { status: 'done' };
    const wallet = await unwrap(api.GET('/wallet-get'));
    // @ts-expect-error -- the wallet has no `amount`
    void wallet.amount;
    const currency: 'NGN' = wallet.currency;
    const escrowData = {} as Data<'escrow-get'>;
    // @ts-expect-error -- counterparty_id is null until the counterparty accepts
    const counterparty: string = escrowData.counterparty_id;
    const failure = {} as ErrorEnvelope;
    const status: number = failure.status;
    expect([query, wrongQuery, currency, counterparty, status]).toHaveLength(5);
  });
});
