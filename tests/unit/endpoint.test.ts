// The endpoint builder (shared/core/endpoint.ts) under Node, with toy endpoints (auth 'none', so no
// database is touched): CORS, methods, body limits, JSON parsing, strict validation of body and
// query, error envelopes and request ids.
import { SERVICE_UNAVAILABLE } from '../../shared/core/refusals.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { endpoint, MAX_BODY_BYTES, REQUEST_DEADLINE_MS } from '../../shared/core/endpoint.ts';
import { userSession } from '../../shared/auth/session.ts';
import { refusal } from '../../shared/core/http.ts';

const ALREADY_DONE = refusal({
  code: 'already_done',
  status: 409,
  when: 'The toy resource is final',
  then: 'Nothing to do',
  message: () => 'Already done',
  example: {},
});
import { queryInt } from '../../shared/core/validation.ts';

// ---- helpers -------------------------------------------------------------------------------

const URL_BASE = 'http://localhost/functions/v1/toy';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Envelope {
  success: boolean;
  status: number;
  data?: unknown;
  error?: string;
  details?: { field: string; message: string }[];
  request_id?: string;
}

/** Reads a response and checks what every response must have: x-request-id and the envelope. */
async function read(res: Response): Promise<Envelope> {
  expect(res.headers.get('x-request-id')).toMatch(UUID);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as Envelope;
  expect(body.status).toBe(res.status);
  if (res.ok) {
    expect(body.success).toBe(true);
    expect(Object.keys(body).sort()).toEqual(['data', 'status', 'success']);
  } else {
    expect(body.success).toBe(false);
    expect(typeof body.error).toBe('string');
    expect((body as { code?: string }).code).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(body).not.toHaveProperty('data');
    for (const key of Object.keys(body)) {
      expect(['success', 'status', 'code', 'error', 'details', 'request_id']).toContain(key);
    }
    if (body.details !== undefined) {
      expect(body.details.length).toBeGreaterThan(0);
      for (const d of body.details) {
        expect(['field', 'message', 'code']).toEqual(expect.arrayContaining(Object.keys(d)));
        expect(typeof d.field).toBe('string');
        expect(typeof d.message).toBe('string');
      }
    }
  }
  return body;
}

const fields = (b: Envelope) => (b.details ?? []).map((d) => d.field).sort();

const jsonRequest = (body: unknown, init: RequestInit = {}, url = URL_BASE) =>
  new Request(url, {
    method: 'POST',
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** A request body streamed in chunks, with no Content-Length (chunked transfer). */
function chunkedRequest(totalBytes: number, chunkBytes = 64 * 1024): Request {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= totalBytes) {
        controller.close();
        return;
      }
      const n = Math.min(chunkBytes, totalBytes - sent);
      controller.enqueue(new Uint8Array(n).fill(0x20)); // spaces
      sent += n;
    },
  });
  return new Request(URL_BASE, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
}

// ---- toy endpoints -------------------------------------------------------------------------

const calls: unknown[] = [];

const echo = endpoint({
  name: 'toy-echo',
  method: 'POST',
  auth: 'none',
  body: z.strictObject({
    name: z.string().min(1),
    count: z.number().int().optional(),
    nested: z.strictObject({ inner: z.strictObject({ value: z.string() }) }).optional(),
    items: z.array(z.strictObject({ qty: z.number().positive() })).optional(),
  }),
  handler: async ({ body, query }) => {
    calls.push(body);
    return { got: body, query: query ?? null };
  },
});

const list = endpoint({
  name: 'toy-list',
  method: 'GET',
  auth: 'none',
  query: z.strictObject({
    limit: queryInt(20, 1, 50),
    status: z.enum(['open', 'closed']).optional(),
  }),
  handler: async ({ query }) => query,
});

const noQuery = endpoint({ name: 'toy-plain', method: 'GET', auth: 'none', handler: async () => ({ ok: true }) });

const noBodyPost = endpoint({
  name: 'toy-action',
  method: 'POST',
  auth: 'none',
  handler: async () => ({ done: true }),
});

const created = endpoint({
  name: 'toy-create',
  method: 'POST',
  auth: 'none',
  status: 201,
  body: z.strictObject({ title: z.string() }),
  handler: async ({ body }) => ({ id: 'new', title: body.title }),
});

const SECRET_INTERNAL = 'connection to postgres://admin:hunter2@db.internal:5432 refused';
const crashing = endpoint({
  name: 'toy-crash',
  method: 'POST',
  auth: 'none',
  handler: async () => {
    throw new Error(SECRET_INTERNAL);
  },
});

const refusing = endpoint({
  name: 'toy-refuse',
  method: 'PATCH',
  auth: 'none',
  handler: async () => {
    throw ALREADY_DONE.error({}, { details: [{ field: 'state', message: 'is final' }] });
  },
});

const guarded = endpoint({
  name: 'toy-guarded',
  method: 'GET',
  auth: userSession,
  handler: async () => ({ never: true }),
});

afterEach(() => {
  vi.restoreAllMocks();
});

// ---- tests ---------------------------------------------------------------------------------

describe('endpoint(): CORS and methods', () => {
  it('answers OPTIONS preflight with 204, CORS headers and a request id, without running the handler', async () => {
    calls.length = 0;
    const res = await echo(
      new Request(URL_BASE, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      }),
    );
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').split(',').map((h) =>
      h.trim().toLowerCase()
    );
    for (const h of ['authorization', 'content-type', 'apikey', 'x-client-info', 'idempotency-key']) {
      expect(allowed).toContain(h);
    }
    expect(res.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    expect(calls).toHaveLength(0);
  });

  it('OPTIONS works for an authenticated endpoint too (no token needed for preflight)', async () => {
    const res = await guarded(new Request(URL_BASE, { method: 'OPTIONS' }));
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
  });

  it('a wrong method is 405 with an Allow header, the envelope and CORS headers', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await echo(new Request(URL_BASE, { method }));
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, OPTIONS');
      const body = await read(res);
      expect(body.error).toMatch(/not allowed/i);
    }
    const res = await list(new Request(URL_BASE, { method: 'POST', body: '{}' }));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, OPTIONS');
    await read(res);
  });

  it('an auth "user" endpoint without a bearer token is 401 (before anything else)', async () => {
    const res = await guarded(new Request(URL_BASE));
    expect(res.status).toBe(401);
    await read(res);
    const malformed = await guarded(new Request(URL_BASE, { headers: { authorization: 'Basic abc' } }));
    expect(malformed.status).toBe(401);
    await read(malformed);
    const bogus = await guarded(new Request(URL_BASE, { headers: { authorization: 'Bearer not.a.jwt' } }));
    expect(bogus.status).toBe(401);
    await read(bogus);
  });
});

describe('endpoint(): body size limit (1 MiB)', () => {
  it('413 when Content-Length says more than 1 MiB, without reading the body', async () => {
    calls.length = 0;
    const res = await echo(
      new Request(URL_BASE, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) },
        body: '{"name":"x"}',
      }),
    );
    expect(res.status).toBe(413);
    await read(res);
    const huge = await echo(
      new Request(URL_BASE, {
        method: 'POST',
        headers: { 'content-length': String(50 * 1024 * 1024) },
        body: '{"name":"x"}',
      }),
    );
    expect(huge.status).toBe(413);
    expect(calls).toHaveLength(0);
  });

  it('413 for a chunked stream without a length that grows past 1 MiB', async () => {
    calls.length = 0;
    const req = chunkedRequest(MAX_BODY_BYTES + 1);
    expect(req.headers.get('content-length')).toBeNull();
    const res = await echo(req);
    expect(res.status).toBe(413);
    const body = await read(res);
    expect(body.error).toMatch(/1 MiB/);
    const far = await echo(chunkedRequest(5 * MAX_BODY_BYTES));
    expect(far.status).toBe(413);
    expect(calls).toHaveLength(0);
  });

  it('a body of exactly 1 MiB is accepted (the limit is inclusive)', async () => {
    const prefix = '{"name":"';
    const suffix = '"}';
    const exact = prefix + 'a'.repeat(MAX_BODY_BYTES - prefix.length - suffix.length) + suffix;
    expect(new TextEncoder().encode(exact).byteLength).toBe(MAX_BODY_BYTES);
    const res = await echo(jsonRequest(exact));
    expect(res.status).toBe(200);
    const body = await read(res);
    expect((body.data as { got: { name: string } }).got.name.length).toBe(
      MAX_BODY_BYTES - prefix.length - suffix.length,
    );
    // the same size streamed without a length is read in full (all spaces: not JSON, so 400, not 413)
    const streamed = await noBodyPost(chunkedRequest(MAX_BODY_BYTES));
    expect(streamed.status).toBe(400);
    expect(fields(await read(streamed))).toEqual(['body']);
  });
});

describe('endpoint(): JSON and body validation', () => {
  it('invalid JSON is 400 with details on body', async () => {
    for (const raw of ['{"name":', 'not json', '{name: "x"}', "{'name':'x'}"]) {
      const res = await echo(jsonRequest(raw));
      expect(res.status, raw).toBe(400);
      const body = await read(res);
      expect(fields(body)).toEqual(['body']);
    }
  });

  it('invalid UTF-8 is 400 (not a silent replacement character)', async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"name":"'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}'),
    ]);
    const res = await echo(new Request(URL_BASE, { method: 'POST', body: bytes }));
    expect(res.status).toBe(400);
    expect(fields(await read(res))).toEqual(['body']);
  });

  it('a missing body on an endpoint with a body schema reports the required fields', async () => {
    const res = await echo(new Request(URL_BASE, { method: 'POST' }));
    expect(res.status).toBe(400);
    const body = await read(res);
    expect(fields(body)).toEqual(['name']);
    expect(body.details?.[0]?.message).toBe('is required');
  });

  it('a JSON body that is not an object is 400 on body', async () => {
    for (const raw of ['[]', '"name"', '42', 'null', 'true']) {
      const res = await echo(jsonRequest(raw));
      expect(res.status, raw).toBe(400);
      expect((await read(res)).details, raw).toEqual([{ field: 'body', message: 'must be an object' }]);
    }
  });

  it('an unknown field is 400, one {field, message} per problem', async () => {
    calls.length = 0;
    const res = await echo(jsonRequest({ name: 'ok', extra: 1, other: 'x' }));
    expect(res.status).toBe(400);
    const body = await read(res);
    expect(body.details).toEqual([
      { field: 'extra', message: expect.any(String) },
      { field: 'other', message: expect.any(String) },
    ]);
    expect(calls).toHaveLength(0);
  });

  it('nested problems are reported with dotted paths', async () => {
    const res = await echo(
      jsonRequest({
        name: '',
        count: 1.5,
        nested: { inner: { value: 7, surprise: true } },
        items: [{ qty: 1 }, { qty: -2 }, { qty: 3, colour: 'red' }],
      }),
    );
    expect(res.status).toBe(400);
    const body = await read(res);
    expect(fields(body)).toEqual([
      'count',
      'items.1.qty',
      'items.2.colour',
      'name',
      'nested.inner.surprise',
      'nested.inner.value',
    ]);
    const byField = Object.fromEntries((body.details ?? []).map((d) => [d.field, d.message]));
    expect(byField['nested.inner.value']).toBe('must be a string');
    expect(byField['count']).toMatch(/integer/);
  });

  it('a valid body reaches the handler, parsed', async () => {
    const res = await echo(jsonRequest({ name: 'Ada', nested: { inner: { value: 'v' } } }));
    expect(res.status).toBe(200);
    // one line per answer: a terminal shows answers printed one after another (curl -s) apart
    expect(await res.clone().text()).toMatch(/^\{"success":true,[^\n]*\}\n$/);
    const body = await read(res);
    expect(body.data).toEqual({ got: { name: 'Ada', nested: { inner: { value: 'v' } } }, query: null });
  });

  it('an endpoint without a body schema accepts no body or {} and refuses anything else', async () => {
    expect((await noBodyPost(new Request(URL_BASE, { method: 'POST' }))).status).toBe(200);
    expect((await noBodyPost(jsonRequest({}))).status).toBe(200);
    const res = await noBodyPost(jsonRequest({ sneaky: true }));
    expect(res.status).toBe(400);
    expect(fields(await read(res))).toEqual(['body']);
    expect((await noBodyPost(jsonRequest('{oops'))).status).toBe(400);
  });
});

describe('endpoint(): query validation', () => {
  it('parses and defaults query parameters', async () => {
    const res = await list(new Request(URL_BASE));
    expect(res.status).toBe(200);
    expect((await read(res)).data).toEqual({ limit: 20 });
    const res2 = await list(new Request(`${URL_BASE}?limit=50&status=open`));
    expect((await read(res2)).data).toEqual({ limit: 50, status: 'open' });
    const res3 = await list(new Request(`${URL_BASE}?limit=1`));
    expect((await read(res3)).data).toEqual({ limit: 1 });
  });

  it('out-of-range, malformed and repeated values are 400 naming the parameter', async () => {
    for (
      const [qs, field] of [
        ['limit=0', 'limit'],
        ['limit=51', 'limit'],
        ['limit=abc', 'limit'],
        ['limit=2.5', 'limit'],
        ['limit=', 'limit'],
        ['status=pending', 'status'],
        ['limit=5&limit=6', 'limit'],
      ] as const
    ) {
      const res = await list(new Request(`${URL_BASE}?${qs}`));
      expect(res.status, qs).toBe(400);
      const body = await read(res);
      expect(fields(body), qs).toEqual([field]);
    }
  });

  it('unknown query parameters are 400, each named', async () => {
    const res = await list(new Request(`${URL_BASE}?limit=5&foo=1&bar=2`));
    expect(res.status).toBe(400);
    expect(fields(await read(res))).toEqual(['bar', 'foo']);
  });

  it('an endpoint without a query schema refuses any query parameter', async () => {
    const res = await noQuery(new Request(`${URL_BASE}?x=1&x=2&y=3`));
    expect(res.status).toBe(400);
    expect(fields(await read(res))).toEqual(['x', 'y']);
    const ok = await noQuery(new Request(URL_BASE));
    expect(ok.status).toBe(200);
    expect((await read(ok)).data).toEqual({ ok: true });
  });

  it('a POST endpoint without a query schema refuses query parameters too', async () => {
    const res = await echo(jsonRequest({ name: 'Ada' }, {}, `${URL_BASE}?debug=1`));
    expect(res.status).toBe(400);
    expect(fields(await read(res))).toEqual(['debug']);
  });
});

describe('endpoint(): errors and statuses', () => {
  it('a request nothing answers gets a 503 with Retry-After at the deadline, not silence', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    vi.useFakeTimers();
    try {
      const stuck = endpoint({ name: 'toy-stuck', method: 'GET', auth: 'none', handler: () => new Promise(() => {}) });
      let answered = false;
      const pending = stuck(new Request(URL_BASE)).then((r) => {
        answered = true;
        return r;
      });
      await vi.advanceTimersByTimeAsync(REQUEST_DEADLINE_MS - 1);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const res = await pending;
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect((await read(res)).error).toBe(SERVICE_UNAVAILABLE.message({}));
    } finally {
      vi.useRealTimers();
    }
  });

  it('the database out of reach is a 503 with Retry-After and a sentence, never a 500', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    for (const code of ['CONNECTION_CLOSED', 'ECONNREFUSED', '57P01', '08006', 'CONNECT_TIMEOUT']) {
      const down = endpoint({
        name: 'toy-down',
        method: 'GET',
        auth: 'none',
        handler: () => Promise.reject(Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code })),
      });
      const res = await down(new Request(URL_BASE));
      expect(res.status, code).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      const body = await read(res);
      expect(body.error).toBe(SERVICE_UNAVAILABLE.message({}));
      expect(JSON.stringify(body)).not.toContain('5432');
    }
  });

  it('a plain Error from the handler is a 500 envelope with request_id and no internals', async () => {
    const logged: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
    });
    const res = await crashing(new Request(URL_BASE, { method: 'POST' }));
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id');
    const text = await res.clone().text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('postgres://');
    expect(text).not.toContain('refused');
    expect(text).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    const body = await read(res);
    expect(body).toEqual({
      success: false,
      status: 500,
      code: 'internal_error',
      error: expect.any(String),
      request_id: requestId,
    });
    // the log carries the request id so the two can be matched
    expect(logged.some((l) => l.includes(requestId as string))).toBe(true);
  });

  it('an HttpError from the handler keeps its status and details', async () => {
    const res = await refusing(new Request(URL_BASE, { method: 'PATCH' }));
    expect(res.status).toBe(409);
    const body = await read(res);
    expect(body).toEqual({
      success: false,
      status: 409,
      code: 'already_done',
      error: 'Already done',
      details: [{ field: 'state', message: 'is final' }],
    });
  });

  it('the status option gives 201 in the header and in the body', async () => {
    const res = await created(jsonRequest({ title: 'T' }));
    expect(res.status).toBe(201);
    expect(await read(res)).toEqual({ success: true, status: 201, data: { id: 'new', title: 'T' } });
    expect(created.meta).toEqual({ name: 'toy-create', method: 'POST', auth: 'none', status: 201 });
    expect(echo.meta.status).toBe(200);
  });

  it('every response carries a fresh x-request-id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await noQuery(new Request(URL_BASE));
      ids.add(res.headers.get('x-request-id') as string);
      await read(res);
    }
    expect(ids.size).toBe(5);
  });
});
