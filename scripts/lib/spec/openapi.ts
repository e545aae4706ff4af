// The OpenAPI 3.1 document of the service, built from the endpoint definitions alone: each
// function's `endpoint({...})` gives its method, auth, query, body and response schemas (zod, turned
// into JSON Schema 2020-12 by zod itself), its success status, its Idempotency-Key support, the
// headers its `verify` checks (`signedBy`) and the refusals it can answer (`refusals`); the statuses
// every endpoint of its kind can answer come from the builder's own rules (builderStatuses). Nothing
// here is written per operation. `npm run openapi` writes the result to docs/api/openapi.json, which
// the `openapi` function serves; tests/unit/openapi.test.ts fails when the committed file differs
// from what this builds, when it stops validating as OpenAPI 3.1, or when a function is missing, and
// every answer the test suites receive is checked against it (tests/support/responses.ts). The
// request schemas state every rule the server checks on a query or a body (the control rule on
// every string, added here; the rest carried by the schemas' zod metadata), and
// tests/unit/request-rules.test.ts checks them against the server's own validation.
import { z } from 'zod';
import type { AuthScheme, EndpointMeta, HeaderAuth } from '../../../shared/core/endpoint.ts';
import { type AnyRefusal, errorBody } from '../../../shared/core/http.ts';
import {
  FUNCTION_NOT_FOUND,
  IDEMPOTENCY_IN_PROGRESS,
  IDEMPOTENCY_KEY_REUSED,
  INTERNAL_ERROR,
  INVALID_SIGNATURE,
  PAYLOAD_TOO_LARGE,
  SERVICE_UNAVAILABLE,
  UNAUTHENTICATED,
  VALIDATION_FAILED,
} from '../../../shared/core/refusals.ts';
import { RULE_KEYWORDS } from '../../../shared/core/rules.ts';
import { excludesControl, NO_CONTROL_PATTERN } from '../../../shared/core/validation.ts';

/** The JSON Schema dialect of OpenAPI 3.1 documents. */
const DIALECT = 'https://spec.openapis.org/oas/3.1/dialect/base';

export type JsonSchema = Record<string, unknown>;

/** What the document says about the API as a whole. */
export const API_INFO = {
  title: 'Escrow service API',
  version: '1.0.0',
  description: [
    'A phone-first escrow service for Nigeria. Every operation is its own function, addressed as',
    '`{base_url}/<operation>`. Bodies and answers are JSON; every answer but this document is an',
    'envelope: `{success: true, status, data}` or `{success: false, status, code, error, details?}`, where',
    '`code` says which refusal it is (a client branches on it, never on `error`, which is for people) and',
    '`details` names each field that was refused. Amounts are in naira (NGN) with at most two',
    'decimals. Money-moving and creating POSTs honour an `Idempotency-Key` header: the same key',
    'with the same body replays the first answer (header `Idempotent-Replayed: true`).',
  ].join(' '),
} as const;

/** The refusals the builder itself answers, whatever the handler: shared/core/endpoint.ts. */
export function builderRefusals(meta: EndpointMeta): AnyRefusal[] {
  const out: AnyRefusal[] = [VALIDATION_FAILED];
  if (meta.auth !== 'none' && !meta.authHidden) out.push(UNAUTHENTICATED);
  out.push(...meta.authRefusals);
  if (meta.signedBy) out.push(INVALID_SIGNATURE);
  if (meta.authHidden) out.push(FUNCTION_NOT_FOUND);
  if (meta.idempotent) out.push(IDEMPOTENCY_KEY_REUSED, IDEMPOTENCY_IN_PROGRESS);
  if (meta.method !== 'GET') out.push(PAYLOAD_TOO_LARGE);
  out.push(INTERNAL_ERROR, SERVICE_UNAVAILABLE);
  return out;
}

/** Every refusal `meta` can answer, by status: the builder's and the endpoint's own. */
export function answerRefusals(meta: EndpointMeta): Map<number, AnyRefusal[]> {
  const out = new Map<number, AnyRefusal[]>();
  for (const r of [...(meta.refusals ?? []), ...builderRefusals(meta)]) {
    const list = out.get(r.status) ?? [];
    if (!list.some((x) => x.code === r.code)) list.push(r);
    out.set(r.status, list);
  }
  return new Map([...out].sort((a, b) => a[0] - b[0]));
}

/** Every status `meta` can answer, success included, with why. */
export function answerStatuses(meta: EndpointMeta): Map<number, string> {
  const out = new Map<number, string>([[
    meta.status,
    meta.status === 201 ? 'Created' : meta.status === 202 ? 'Accepted' : 'OK',
  ]]);
  for (const s of meta.alsoSucceedsWith ?? []) out.set(s.status, s.description);
  for (const [status, refusals] of answerRefusals(meta)) {
    out.set(status, refusals.map((r) => `\`${r.code}\`: ${r.when} (${r.then})`).join('; or '));
  }
  return new Map([...out].sort((a, b) => a[0] - b[0]));
}

/** The example body of a refusal: its answer for its example facts. */
export function refusalExample(r: AnyRefusal): JsonSchema {
  return errorBody(r.status, r.code, r.message(r.example), r.exampleDetails ?? r.details?.(r.example)) as JsonSchema;
}

/**
 * In an answer, formats that say all a client needs; zod adds its own regex of each, which is
 * dropped. A request keeps the pattern beside the format: it is exactly what the server accepts
 * (a UUID of any version, a timestamp Postgres reads), where a validator's format may allow more.
 */
const SELF_EXPLAINING_FORMATS = new Set(['uuid', 'date-time', 'date']);

/** The component every value of free-form JSON in a request refers to (a webhook's payload). */
export const FREE_JSON = 'JsonWithoutControlCharacters';
const FREE_JSON_REF = { $ref: `#/components/schemas/${FREE_JSON}` };

/**
 * Any JSON without a forbidden control character in a string or a key, at any depth: what the
 * server's control rule (controlCharacterProblems) leaves of free-form JSON.
 */
const freeJson: JsonSchema = {
  description: 'Any JSON value whose strings and object keys, at any depth, hold no control character but tab, ' +
    'line feed and carriage return',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: NO_CONTROL_PATTERN },
    { type: 'array', items: FREE_JSON_REF },
    { type: 'object', propertyNames: { pattern: NO_CONTROL_PATTERN }, additionalProperties: FREE_JSON_REF },
  ],
};

/**
 * The control rule on one string of a request: the server refuses NUL and the other C0 codes
 * (tab, line feed and carriage return aside) in every string it is sent, before any schema runs,
 * so every string schema states it: as its pattern, or beside a pattern of its own that does not
 * already exclude them. An enum or a constant needs nothing.
 */
function controlRule(json: JsonSchema): void {
  if (json.type !== 'string' || 'enum' in json || 'const' in json) return;
  const allOf = (json.allOf ?? []) as JsonSchema[];
  const patterns = [json.pattern, ...allOf.map((s) => s.pattern)].filter((p): p is string => typeof p === 'string');
  if (patterns.some(excludesControl)) return;
  if (patterns.length === 0) json.pattern = NO_CONTROL_PATTERN;
  else json.allOf = [...allOf, { pattern: NO_CONTROL_PATTERN }];
}

/** JSON Schema of a zod schema, as a client sends it (request) or receives it (response). */
export function schemaOf(schema: z.ZodType, side: 'request' | 'response' = 'response'): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'throw',
    target: 'draft-2020-12',
    override: ({ jsonSchema }) => {
      const format = jsonSchema.format;
      if (side === 'response' && typeof format === 'string' && SELF_EXPLAINING_FORMATS.has(format)) {
        delete jsonSchema.pattern;
      }
      // a query integer or boolean (shared/core/validation.ts) is described as what it stands for
      if (jsonSchema.type === 'integer') delete jsonSchema.pattern;
      if (jsonSchema.type === 'boolean') delete jsonSchema.enum;
      if (side === 'request') {
        controlRule(jsonSchema as JsonSchema);
        // free-form JSON (a webhook's payload) is any JSON the control rule leaves; a record whose
        // values have a schema of their own (a merchant's metadata: strings) keeps it
        const extra = jsonSchema.additionalProperties;
        const free = extra === true || (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0);
        if (jsonSchema.type === 'object' && free) {
          jsonSchema.propertyNames = { pattern: NO_CONTROL_PATTERN };
          jsonSchema.additionalProperties = FREE_JSON_REF;
        }
      }
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * The document's tags, in the order a user meets them (admin last), each with the operations'
 * first words it groups.
 */
export const TAGS: readonly { name: string; description: string; prefixes: readonly string[] }[] = [
  { name: 'auth', description: 'Sign-up, login, sessions and passwords, by phone', prefixes: ['auth'] },
  { name: 'profile', description: "The caller's profile and next of kin, and public profiles", prefixes: ['profile'] },
  {
    name: 'kyc',
    description: 'Verification tiers and their limits; money moves from tier 1',
    prefixes: ['kyc', 'identity'],
  },
  {
    name: 'wallet',
    description: 'The wallet: top-ups, withdrawals, the dedicated account and the transactions',
    prefixes: ['wallet', 'virtual', 'transaction'],
  },
  { name: 'cards', description: 'Saved cards', prefixes: ['card'] },
  { name: 'payouts', description: 'Bank accounts money is paid out to', prefixes: ['payout'] },
  { name: 'escrows', description: 'Escrows from creation to release or refund', prefixes: ['escrow'] },
  { name: 'milestones', description: 'Milestones of hiring escrows', prefixes: ['milestone'] },
  {
    name: 'conversations',
    description: "Each escrow's conversation and its feed",
    prefixes: ['conversation', 'message'],
  },
  { name: 'notifications', description: 'What happened, for each user', prefixes: ['notification'] },
  { name: 'events', description: "Live updates: the caller's events as Server-Sent Events", prefixes: ['events'] },
  { name: 'reviews', description: 'Reviews of a finished deal', prefixes: ['review'] },
  { name: 'disputes', description: 'Disputes, proposals and settlements', prefixes: ['dispute'] },
  { name: 'account', description: "The caller's data rights: deleting the account", prefixes: ['account'] },
  {
    name: 'merchants',
    description: 'Merchant accounts of businesses and their API keys (the owner signed in)',
    prefixes: ['merchant'],
  },
  { name: 'webhooks', description: 'What the providers call (signed)', prefixes: ['webhook'] },
  { name: 'jobs', description: 'The scheduled job (signed)', prefixes: ['jobs'] },
  { name: 'document', description: 'This document', prefixes: ['openapi'] },
  {
    name: 'account',
    description: "The caller's data rights: everything held about them as one document",
    prefixes: ['account'],
  },
  { name: 'admin', description: 'Operators only; anyone else gets the 404 of a missing function', prefixes: ['admin'] },
];

/**
 * The rules between the parameters of a query (shared/core/rules.ts: before and after not
 * together), as a JSON Schema of the query read as an object of its parameters. OpenAPI 3.1 has no
 * place for them among the parameters, so the operation carries them as `x-query-schema`.
 */
function queryRules(meta: EndpointMeta): JsonSchema | undefined {
  if (!meta.query) return undefined;
  const json = schemaOf(meta.query, 'request');
  const rules = Object.fromEntries(RULE_KEYWORDS.filter((k) => k in json).map((k) => [k, json[k]]));
  if (Object.keys(rules).length === 0) return undefined;
  return { ...(typeof json.description === 'string' ? { description: json.description } : {}), ...rules };
}

/** The tag of an operation, by its name's first word (auth, escrow, wallet, ...). */
export function tagOf(name: string): string {
  const first = name.split('-')[0] as string;
  const tag = TAGS.find((t) => t.prefixes.includes(first));
  if (!tag) {
    throw new Error(`no tag groups operations named ${first}-...: add it to TAGS in scripts/lib/spec/openapi.ts`);
  }
  return tag.name;
}

const errorEnvelope: JsonSchema = {
  type: 'object',
  description:
    "A refusal or failure: the status repeated, the refusal's code (docs/errors.md; a client branches on it), " +
    'a message for people and, for invalid input, each field.',
  properties: {
    success: { const: false },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { $ref: '#/components/schemas/ErrorCode' },
    error: { type: 'string' },
    request_id: { type: 'string', description: 'On a 500 only: the id the log has the failure under' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          field: { type: 'string' },
          message: { type: 'string' },
          code: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
        },
        required: ['field', 'message'],
        additionalProperties: false,
      },
    },
  },
  required: ['success', 'status', 'code', 'error'],
  additionalProperties: false,
};

const replayed = {
  description: '`true` when this answer is the replay of an earlier request with the same Idempotency-Key',
  schema: { const: 'true' },
};

const retryAfter = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'string', pattern: '^[0-9]+$' },
};

function successEnvelope(status: number, data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: { success: { const: true }, status: { const: status }, data },
    required: ['success', 'status', 'data'],
    additionalProperties: false,
  };
}

/** The query parameters of a z.object query schema, one by one. */
function queryParameters(meta: EndpointMeta): JsonSchema[] {
  if (!meta.query) return [];
  const json = schemaOf(meta.query, 'request');
  const props = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(props).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

function headerAuthScheme(auth: HeaderAuth): [string, JsonSchema] {
  const [first] = auth.headers;
  return [auth.scheme, {
    type: 'apiKey',
    in: 'header',
    name: first?.name,
    description: auth.description,
  }];
}

/** The scheme of a mode that declares none (shared/core/endpoint.ts AuthMode.scheme): a session's token. */
const SESSION_BEARER: AuthScheme = {
  name: 'bearer',
  definition: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'The access token of a session (auth-signup, auth-verify, auth-refresh).',
  },
};

/** The security scheme of an endpoint's auth mode. */
const authSchemeOf = (meta: EndpointMeta): AuthScheme => meta.authScheme ?? SESSION_BEARER;

/** The security scheme of a stream's ticket. */
const STREAM_TICKET = 'streamTicket';

/**
 * A stream's success answer: `text/event-stream`, whose events OpenAPI 3.1 cannot describe; the
 * schema of each event's `data`, by its name, goes under `x-events`.
 */
function eventStreamContent(stream: NonNullable<EndpointMeta['stream']>): JsonSchema {
  return {
    'text/event-stream': {
      schema: { type: 'string', description: stream.description },
      example: stream.example,
      'x-events': Object.fromEntries(Object.entries(stream.events).map(([name, s]) => [name, schemaOf(s)])),
    },
  };
}

/** One operation of the document. */
export function operationOf(meta: EndpointMeta): JsonSchema {
  const parameters: JsonSchema[] = [...queryParameters(meta)];
  for (const h of meta.signedBy?.headers ?? []) {
    parameters.push({
      name: h.name,
      in: 'header',
      required: h.required,
      description: h.description,
      schema: { type: 'string' },
    });
  }
  if (meta.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Makes a retry safe. A key belongs to the caller and this operation; for 24 hours the same key ' +
        'with the same body replays the first answer (success or refusal, with `Idempotent-Replayed: true`) ' +
        'instead of doing the work again, and the same key with another body is refused with 409. A 429 or a 5xx ' +
        'is not kept: a retry with the key runs again.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    });
  }
  if (meta.stream) {
    parameters.push({
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description:
        'The id of the last event received: the stream resumes after it (a reconnecting EventSource sends it)',
      schema: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
    });
  }
  const responses: Record<string, JsonSchema> = {};
  const refusals = answerRefusals(meta);
  for (const [status, description] of answerStatuses(meta)) {
    const success = status < 300;
    const data = meta.response ? schemaOf(meta.response) : {};
    const codes = refusals.get(status) ?? [];
    // a refusal is the error envelope, its `status` the answer's own and its `code` one of these
    const schema = success ? (meta.envelope ? successEnvelope(status, data) : data) : {
      allOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }, {
        properties: { status: { const: status }, code: { enum: codes.map((r) => r.code) } },
      }],
    };
    const examples = Object.fromEntries(codes.map((r) => [r.code, { value: refusalExample(r) }]));
    const headers: Record<string, JsonSchema> = {};
    if (status === 429 || status === 503) headers['Retry-After'] = retryAfter;
    // what an Idempotency-Key keeps, and so replays: every answer but a 429 or a 5xx
    if (meta.idempotent && status !== 429 && status < 500) headers['Idempotent-Replayed'] = replayed;
    responses[String(status)] = {
      description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: success && meta.stream ? eventStreamContent(meta.stream) : {
        'application/json': success ? { schema } : { schema, examples },
      },
    };
  }
  const queryRuleSchema = queryRules(meta);
  const op: JsonSchema = {
    operationId: meta.name,
    tags: [tagOf(meta.name)],
    summary: meta.summary ?? meta.name,
    ...(meta.description ? { description: meta.description } : {}),
    security: meta.auth === 'none'
      ? (meta.signedBy ? [{ [meta.signedBy.scheme]: [] }] : [])
      : meta.stream
      ? [{ [authSchemeOf(meta).name]: [] }, { [STREAM_TICKET]: [] }]
      : [{ [authSchemeOf(meta).name]: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(queryRuleSchema ? { 'x-query-schema': queryRuleSchema } : {}),
    responses,
  };
  if (meta.body) {
    const body = schemaOf(meta.body, 'request');
    op.requestBody = {
      // required when an empty body is refused: a required field, or a rule such as "exactly one of"
      required: !meta.body.safeParse({}).success,
      content: { 'application/json': { schema: body } },
    };
  }
  return op;
}

/** The whole document, from the meta of every function (any order: it is sorted by name). */
export function openApiDocument(metas: readonly EndpointMeta[]): JsonSchema {
  const sorted = [...metas].sort((a, b) => a.name.localeCompare(b.name));
  const paths: Record<string, JsonSchema> = {};
  const schemes: Record<string, JsonSchema> = { [SESSION_BEARER.name]: { ...SESSION_BEARER.definition } };
  for (const meta of sorted) {
    paths[`/${meta.name}`] = { [meta.method.toLowerCase()]: operationOf(meta) };
    if (meta.auth !== 'none') {
      const { name, definition } = authSchemeOf(meta);
      schemes[name] = { ...definition };
    }
    if (meta.signedBy) {
      const [name, scheme] = headerAuthScheme(meta.signedBy);
      schemes[name] = scheme;
    }
    if (meta.stream) {
      schemes[STREAM_TICKET] = {
        type: 'apiKey',
        in: 'query',
        name: 'ticket',
        description: "A ticket from events-ticket, for clients that cannot send headers (a browser's EventSource).",
      };
    }
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: DIALECT,
    info: API_INFO,
    servers: [
      { url: 'http://127.0.0.1:54321/functions/v1', description: 'The local stack (npm start)' },
      {
        url: 'https://{project_ref}.supabase.co/functions/v1',
        description: 'A Supabase project',
        variables: { project_ref: { default: 'project-ref', description: "The project's reference" } },
      },
    ],
    tags: TAGS.filter((t) => sorted.some((m) => tagOf(m.name) === t.name)).map(({ name, description }) => ({
      name,
      description,
    })),
    paths,
    components: {
      schemas: {
        ErrorEnvelope: errorEnvelope,
        [FREE_JSON]: freeJson,
        ErrorCode: {
          type: 'string',
          description: 'Every code an operation may answer (docs/errors.md); each operation lists its own per status.',
          enum: [...new Set(sorted.flatMap((m) => [...answerRefusals(m).values()].flat().map((r) => r.code)))].sort(),
        },
      },
      securitySchemes: schemes,
    },
  };
}

/** The document as committed: JSON with two-space indents and a final newline. */
export function renderOpenApi(document: JsonSchema): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
