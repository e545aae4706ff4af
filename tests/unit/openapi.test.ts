// The OpenAPI document (docs/api/openapi.json) is built from the endpoint definitions
// (scripts/lib/spec/openapi.ts, `npm run openapi`), never edited by hand. These tests fail when the committed
// file is stale, when a function is missing from it, when it stops validating as OpenAPI 3.1 (the
// maintained validator @seriousme/openapi-schema-validator, which checks the document against the
// OpenAPI Initiative's 3.1 JSON Schema), or when it loses what a client needs: auth, bounds, enums,
// Idempotency-Key, the signature headers. That every real answer matches it is checked by
// tests/support/responses.ts, for every call the suites make.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { answerRefusals, openApiDocument, renderOpenApi } from '../../scripts/lib/spec/openapi.ts';
import { endpoint } from '../../shared/core/endpoint.ts';
import { merchantKey } from '../../shared/merchants/key-auth.ts';
import { keyModePrefix } from '../../shared/merchants/merchants.ts';
import { endpointMeta } from '../support/responses.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const committedText = readFileSync(`${root}docs/api/openapi.json`, 'utf8');
// deno-lint-ignore no-explicit-any -- a parsed JSON document, read by path below
const committed = JSON.parse(committedText) as any;
const names = readdirSync(`${root}supabase/functions`, { withFileTypes: true })
  .filter((e) => e.isDirectory() && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(e.name))
  .map((e) => e.name)
  .sort();

async function allMetas(): Promise<EndpointMeta[]> {
  const metas = await Promise.all(names.map((n) => endpointMeta(n)));
  return metas.map((m, i) => {
    if (!m) throw new Error(`supabase/functions/${names[i]}/handler.ts exports no endpoint`);
    return m;
  });
}

const operation = (name: string) => {
  const path = committed.paths[`/${name}`] as Record<string, Record<string, unknown>> | undefined;
  const [method, op] = Object.entries(path ?? {})[0] ?? [];
  // deno-lint-ignore no-explicit-any -- read by path in the assertions
  return { method, op: op as Record<string, any> | undefined };
};

describe('the OpenAPI document', () => {
  it('is what npm run openapi builds from the endpoint definitions today (run it after changing an endpoint)', async () => {
    const built = renderOpenApi(openApiDocument(await allMetas()));
    expect(committedText === built, 'docs/api/openapi.json is stale: run `npm run openapi` and commit it').toBe(true);
  });

  it('has one operation per function, with its method, and nothing else', async () => {
    expect(Object.keys(committed.paths).sort()).toEqual(names.map((n) => `/${n}`));
    for (const meta of await allMetas()) {
      const { method, op } = operation(meta.name);
      expect(method, meta.name).toBe(meta.method.toLowerCase());
      expect(op?.operationId).toBe(meta.name);
      expect(meta.summary, `${meta.name} has no summary for the reference`).toMatch(/^[A-Z].{10,}/);
    }
  });

  it('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(committed);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('fails validation when the document is broken (the validator is not a formality)', async () => {
    const broken = structuredClone(committed);
    broken.paths['/wallet-get'].get.responses = 'none';
    const result = await new Validator().validate(broken);
    expect(result.valid).toBe(false);
  });

  it('declares each operation’s auth: bearer, a webhook’s signature headers, or none', async () => {
    for (const meta of await allMetas()) {
      const { op } = operation(meta.name);
      const security = op?.security as Record<string, unknown>[];
      // a stream also opens with a ticket in the query (a browser's EventSource sends no headers)
      if (meta.auth !== 'none' && meta.stream) {
        expect(security, meta.name).toEqual([{ bearer: [] }, { streamTicket: [] }]);
        expect(committed.components.securitySchemes.streamTicket).toMatchObject({ type: 'apiKey', in: 'query' });
      } else if (meta.auth !== 'none') {
        // a mode's own scheme (a merchant's API key), else a session's bearer token
        const scheme = meta.authScheme?.name ?? 'bearer';
        expect(security, meta.name).toEqual([{ [scheme]: [] }]);
        expect(committed.components.securitySchemes[scheme], meta.name).toMatchObject({ type: 'http' });
      } else if (meta.signedBy) {
        expect(security, meta.name).toEqual([{ [meta.signedBy.scheme]: [] }]);
        expect(committed.components.securitySchemes[meta.signedBy.scheme]).toMatchObject({
          type: 'apiKey',
          in: 'header',
        });
        const headers = (op?.parameters as { in: string; name: string }[]).filter((p) => p.in === 'header');
        for (const h of meta.signedBy.headers) expect(headers.map((p) => p.name), meta.name).toContain(h.name);
      } else expect(security, meta.name).toEqual([]);
    }
    expect(operation('webhook-payments').op?.parameters.map((p: { name: string }) => p.name)).toEqual([
      'x-payments-signature',
      'x-paystack-signature',
    ]);
  });

  it('declares Idempotency-Key on exactly the idempotent operations', async () => {
    for (const meta of await allMetas()) {
      const { op } = operation(meta.name);
      const has = ((op?.parameters ?? []) as { name: string }[]).some((p) => p.name === 'Idempotency-Key');
      expect(has, meta.name).toBe(meta.idempotent);
    }
    expect(operation('escrow-create').op?.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
    );
  });

  it('carries the bounds and enums of queries and bodies', () => {
    const list = operation('escrow-list').op;
    const limit = list?.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 50 });
    const status = list?.parameters.find((p: { name: string }) => p.name === 'status');
    expect(status.schema.enum).toContain('invite_pending');
    const topup = operation('wallet-topup').op?.requestBody.content['application/json'].schema;
    expect(topup.properties.amount).toMatchObject({ type: 'number', minimum: 100, maximum: 100_000_000 });
    expect(topup.required).toEqual(['amount']);
    expect(topup.additionalProperties).toBe(false);
    const create = operation('escrow-create').op?.requestBody.content['application/json'].schema;
    expect(create.properties.category.enum).toEqual(['goods_products', 'hiring', 'auto_dealership', 'p2p_crypto']);
    expect(create.properties.title).toMatchObject({ minLength: 1, maxLength: 200 });
  });

  it('declares the statuses of each kind of endpoint, and the refusals an endpoint names', () => {
    const statuses = (name: string) => Object.keys(operation(name).op?.responses ?? {}).map(Number);
    // a party's transition: the builder's statuses, and the wrong party, no such escrow, the wrong state
    expect(statuses('escrow-release')).toEqual([200, 400, 401, 403, 404, 409, 413, 500, 503]);
    // an operator read: a non-operator gets the 404 of a missing function; 401 without a second-factor
    // pass, 403 for a role that may not read it; no 413 (a GET)
    expect(statuses('admin-dispute-list')).toEqual([200, 400, 401, 403, 404, 500, 503]);
    // a webhook: 401 for its signature
    expect(statuses('webhook-payments')).toEqual([200, 400, 401, 413, 500, 503]);
    // a card charge: declined (402), over a limit (403), the provider down (503)
    expect(statuses('wallet-topup')).toEqual([200, 400, 401, 402, 403, 404, 409, 413, 500, 503]);
    // a card saved twice is 200 with the card, beside the 201 of a new one
    expect(statuses('card-add')).toEqual(expect.arrayContaining([200, 201]));
  });

  it('declares Retry-After where a wait is said, and Idempotent-Replayed on the answers a key keeps', () => {
    const topup = operation('wallet-topup').op?.responses;
    expect(Object.keys(topup['503'].headers)).toEqual(['Retry-After']);
    expect(Object.keys(topup['200'].headers)).toEqual(['Idempotent-Replayed']);
    expect(Object.keys(topup['403'].headers)).toEqual(['Idempotent-Replayed']);
    expect(topup['503'].description).toMatch(/same Idempotency-Key/);
    expect(Object.keys(operation('auth-send-otp').op?.responses['429'].headers)).toEqual(['Retry-After']);
    expect(operation('wallet-get').op?.responses['200'].headers).toBeUndefined();
  });

  it('marks a body required when an empty one is refused, rules such as "exactly one" included', () => {
    const accept = operation('escrow-accept').op?.requestBody;
    expect(accept.required).toBe(true);
    expect(accept.content['application/json'].schema.oneOf).toEqual([
      { required: ['escrow_id'] },
      { required: ['invite_token'] },
    ]);
    expect(operation('notification-read').op?.requestBody.required).toBe(true);
    // a PATCH with nothing to change is refused: minProperties 1
    expect(operation('profile-update').op?.requestBody.required).toBe(true);
    expect(operation('profile-update').op?.requestBody.content['application/json'].schema.minProperties).toBe(1);
    // a field that is named only to be refused accepts no value
    const profile = operation('profile-update').op?.requestBody.content['application/json'].schema;
    expect(profile.properties.phone.not).toEqual({});
  });

  it('answers every refusal with the error envelope, and each operation its own statuses', async () => {
    for (const meta of await allMetas()) {
      const { op } = operation(meta.name);
      const declared = Object.keys(op?.responses ?? {}).map(Number);
      expect(declared, meta.name).toEqual(expect.arrayContaining([meta.status, 400, 500, 503]));
      if (meta.auth === 'user') expect(declared, meta.name).toContain(401);
      if (meta.method !== 'GET') expect(declared, meta.name).toContain(413);
      for (const s of declared.filter((s) => s >= 400)) {
        const codes = (answerRefusals(meta).get(s) ?? []).map((r) => r.code);
        expect(codes.length, `${meta.name} ${s}`).toBeGreaterThan(0);
        const content = op?.responses[s].content['application/json'];
        expect(content.schema, `${meta.name} ${s}`).toEqual({
          allOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }, {
            properties: { status: { const: s }, code: { enum: codes } },
          }],
        });
        // one example body per code, which the envelope accepts
        expect(Object.keys(content.examples), `${meta.name} ${s}`).toEqual(codes);
        for (const code of codes) {
          expect(content.examples[code].value).toMatchObject({ success: false, status: s, code });
        }
      }
    }
  });

  it('orders its tags as a user meets the operations, admin last, and tags every operation once', async () => {
    const doc = JSON.parse(readFileSync(`${root}docs/api/openapi.json`, 'utf8'));
    const names = doc.tags.map((t: { name: string }) => t.name);
    expect(names.slice(0, 3)).toEqual(['auth', 'profile', 'kyc']);
    expect(names.at(-1)).toBe('admin');
    expect(names.indexOf('escrows')).toBeLessThan(names.indexOf('disputes'));
    for (const t of doc.tags) expect(t.description.length, t.name).toBeGreaterThan(5);
    for (const meta of await allMetas()) {
      const { op } = operation(meta.name);
      expect(op?.tags, meta.name).toHaveLength(1);
      expect(names, meta.name).toContain(op?.tags[0]);
    }
  });

  it('is what the openapi function says it answers (its response schema takes the tags with their descriptions)', async () => {
    const meta = await endpointMeta('openapi');
    const doc = JSON.parse(committedText);
    const parsed = meta!.response!.safeParse(doc);
    expect(parsed.success, JSON.stringify(parsed.error?.issues.slice(0, 3))).toBe(true);
  });

  it('says where a field can be null (docs/openapi.md)', () => {
    const escrow = operation('escrow-get').op?.responses['200'].content['application/json'].schema.properties.data;
    expect(escrow.properties.counterparty_id.anyOf).toContainEqual({ type: 'null' });
    expect(escrow.properties.funded_at.anyOf).toContainEqual({ type: 'null' });
    const notification = operation('notification-list').op?.responses['200'].content['application/json'].schema
      .properties.data;
    expect(JSON.stringify(notification)).toMatch(
      /"action_label":\{"anyOf":\[\{"type":"string","enum":\[[^\]]+\]\},\{"type":"null"\}\]/,
    );
  });
});

describe("an auth mode's own security scheme", () => {
  // no operation takes a merchant key yet: a toy endpoint of the mode shows what the document says of one
  const toy = endpoint({
    name: 'merchant-toy',
    summary: 'A toy',
    method: 'POST',
    auth: merchantKey,
    idempotent: true,
    handler: () => Promise.resolve({}),
  });
  // deno-lint-ignore no-explicit-any -- a built document, read by path below
  const doc = openApiDocument([toy.meta]) as any;
  const op = doc.paths['/merchant-toy'].post;

  it('declares the merchant key as its own scheme, beside the session bearer', async () => {
    expect(op.security).toEqual([{ merchantKey: [] }]);
    expect(doc.components.securitySchemes.merchantKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', bearerFormat: 'JWT' });
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
  });

  it("lists what the mode refuses with (401, and the key's 429 with Retry-After)", () => {
    expect(op.responses['401'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual([
      'unauthenticated',
    ]);
    expect(op.responses['429'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual([
      'rate_limited',
    ]);
    expect(op.responses['429'].headers['Retry-After']).toBeDefined();
  });

  it('gives keys of a deployment with real providers esk_live_, else esk_test_', () => {
    expect(keyModePrefix({ local: false, ALLOW_SANDBOX_PROVIDERS: 'false' })).toBe('esk_live_');
    expect(keyModePrefix({ local: false, ALLOW_SANDBOX_PROVIDERS: 'true' })).toBe('esk_test_');
    expect(keyModePrefix({ local: true, ALLOW_SANDBOX_PROVIDERS: 'false' })).toBe('esk_test_');
  });
});
