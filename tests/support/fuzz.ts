// The engine of the schema-driven fuzz (tests/integration/fuzz.clock.test.ts, docs/openapi.md "The
// fuzz"): requests generated from the OpenAPI document's own request schemas (its query, body and
// Idempotency-Key), mutations that break one rule of them, ajv's verdict on each (so the fuzz
// knows which kind it sent), the request as the server receives it (signed where the operation's
// security scheme says so), and the properties an answer must have. Nothing here knows an operation
// by name: the suite gives the fixtures.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { baseUrl } from './api.ts';
import { checkSuccessBody } from './responses.ts';
import {
  bodySchema,
  doc,
  documentAccepts,
  type Json,
  methodOf,
  operation,
  queryParameters,
  querySchema,
  requestAjv,
  standalone,
} from './openapi-requests.ts';
import {
  TEST_IDENTITY_WEBHOOK_SECRET,
  TEST_JOBS_SECRET,
  TEST_KYC_WEBHOOK_SECRET,
  TEST_PAYMENTS_WEBHOOK_SECRET,
} from './stack.ts';

// ---- randomness: fast-check's generators, drawn one at a time -------------------------------

/**
 * One request's randomness: fast-check values drawn in order from a seeded fc.gen(). Choices are
 * uniform (fc.noBias): fast-check's bias towards small values would skew every probability.
 */
export class Draw {
  constructor(private readonly g: fc.GeneratorValue) {}
  int(min: number, max: number): number {
    return this.g((c) => fc.noBias(fc.integer(c)), { min, max });
  }
  chance(p: number): boolean {
    return this.int(0, 9_999) < p * 10_000;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from nothing');
    return xs[this.int(0, xs.length - 1)] as T;
  }
  from<T>(arb: fc.Arbitrary<T>): T {
    return this.g(() => arb);
  }
}

/** A number for a seed and a name: each operation's run is reproducible on its own. */
export function seedFor(seed: number, name: string): number {
  let h = 2166136261 ^ seed;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return h | 0;
}

/** n draws, reproducible from the seed. */
export const draws = (seed: number, n: number): Draw[] =>
  fc.sample(fc.gen(), { seed, numRuns: n }).map((g) => new Draw(g));

// ---- the operations as the document describes them ------------------------------------------

export interface FuzzOperation {
  name: string;
  method: string;
  /** bearer, none, or the name of the signature's security scheme in the document */
  security: string;
  hasQuery: boolean;
  /** The body's schema; undefined: the operation takes no body. */
  body: Json | undefined;
  bodyRequired: boolean;
  /** The schema of the Idempotency-Key header, if the operation takes one. */
  idempotencyKey: Json | undefined;
  /** Status -> the codes the document lists for it (empty for a success). */
  responses: Map<number, string[]>;
}

const IDEMPOTENCY_KEY = 'Idempotency-Key';

export function fuzzOperation(name: string): FuzzOperation {
  const op = operation(name);
  const security = Object.keys((op.security ?? [])[0] ?? {})[0] ?? 'none';
  const params = (op.parameters ?? []) as { in: string; name: string; schema: Json }[];
  const responses = new Map<number, string[]>();
  for (const [status, r] of Object.entries(op.responses as Record<string, { content?: Record<string, Json> }>)) {
    const schema = r.content?.['application/json']?.schema as Json | undefined;
    const parts = (schema?.allOf ?? []) as { properties?: { code?: { enum?: string[] } } }[];
    responses.set(Number(status), parts.flatMap((p) => p.properties?.code?.enum ?? []));
  }
  return {
    name,
    method: methodOf(name),
    security,
    hasQuery: queryParameters(name).length > 0,
    body: bodySchema(name),
    bodyRequired: op.requestBody?.required === true,
    idempotencyKey: params.find((p) => p.in === 'header' && p.name === IDEMPOTENCY_KEY)?.schema,
    responses,
  };
}

// ---- values from a schema ------------------------------------------------------------------

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `{not: {}}`: a property the schema never accepts. */
const isNever = (s: unknown) => isObject(s) && isObject(s.not) && Object.keys(s.not).length === 0;

function resolve(schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  return resolve(doc.components.schemas[name] as Json);
}

const matchers = new Map<string, (v: unknown) => boolean>();
/** Does the value match this (sub)schema of the document? */
export function matches(schema: Json, value: unknown): boolean {
  const key = JSON.stringify(schema);
  let m = matchers.get(key);
  if (!m) {
    const v = requestAjv.compile(key.includes('"$ref"') ? standalone(schema) : schema);
    m = (x) => v(x) as boolean;
    matchers.set(key, m);
  }
  return m(value);
}

const merge = (base: Json | undefined, extra: Json | undefined): Json =>
  extra ? { ...(base ?? {}), allOf: [...((base?.allOf ?? []) as Json[]), extra] } : (base ?? {});

/** Patterns of a string schema: its own and those of its allOf. */
const patternsOf = (s: Json): string[] =>
  [s.pattern, ...((s.allOf ?? []) as Json[]).map((x) => x.pattern)].filter((p): p is string => typeof p === 'string');

/** The control rule's patterns (docs/openapi.md): no characters of their own to generate from. */
const isTextPattern = (p: string) => p.startsWith('^[^\\u0000-');

const codePoints = (s: string) => [...s].length;

const regexes = new Map<string, RegExp>();
/** A pattern of the document, compiled as ECMA-262 with Unicode semantics (docs/openapi.md). */
const regex = (p: string): RegExp => {
  let re = regexes.get(p);
  if (!re) regexes.set(p, re = new RegExp(p, 'u'));
  return re;
};

const generators = new Map<string, fc.Arbitrary<string>>();
/**
 * Strings matching a pattern (fc.stringMatching), cached: white space (`\s`) outside a class is
 * generated as at most one space or tab, never \v or \f (control characters).
 */
function matching(p: string): fc.Arbitrary<string> {
  let arb = generators.get(p);
  if (arb) return arb;
  let out = '';
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      const next = p[i + 1]!;
      i++;
      if (!inClass && next === 's') {
        const star = p[i + 1] === '*';
        if (star) i++;
        out += star ? '[ \\t]?' : '[ \\t]';
      } else out += `\\${next}`;
      continue;
    }
    if (c === '[') inClass = true;
    if (c === ']') inClass = false;
    out += c;
  }
  arb = fc.stringMatching(new RegExp(out));
  generators.set(p, arb);
  return arb;
}

const TEXT_UNITS: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789'.split('')) },
  { weight: 3, arbitrary: fc.constantFrom(...' -_.,:;/@+#!?()&%$*\'"\\<>{}[]=~`^|'.split('')) },
  { weight: 2, arbitrary: fc.constantFrom(' ', '\t', '\n', '\r') },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ñ', 'ß', 'ı', 'ſ', '中', 'Ж', 'ع', '😀', '𝔸', '👩🏽‍💻') },
  { weight: 1, arbitrary: fc.constantFrom('\u00a0', '\u2028', '\u3000', '\ufeff', '\u007f', '\u0085', '\u200b') },
  { weight: 1, arbitrary: fc.constantFrom('\ud800', '\udfff') },
);

/** Free text of min to max code points (mostly short; sometimes as long as allowed). */
function text(d: Draw, min: number, max: number): string {
  const upper = Math.min(max, d.chance(0.1) ? max : min + 16);
  const length = d.int(min, Math.max(min, upper));
  const units = d.from(fc.array(TEXT_UNITS, { minLength: length, maxLength: length }));
  return units.join('');
}

function sampleString(s: Json, d: Draw): string {
  const patterns = patternsOf(s);
  const min = (s.minLength as number | undefined) ?? 0;
  const max = (s.maxLength as number | undefined) ?? Math.max(min, 64);
  const specific = patterns.filter((p) => !isTextPattern(p));
  const fits = (v: string) => codePoints(v) >= min && codePoints(v) <= max && patterns.every((p) => regex(p).test(v));
  let last = '';
  for (let attempt = 0; attempt < 40; attempt++) {
    const v = specific.length > 0 ? d.from(matching(specific[specific.length - 1]!)) : text(d, min, max);
    if (fits(v)) return v;
    last = v;
  }
  return last; // the caller's final check (ajv) finds what is wrong with it
}

const AMOUNT = { type: 'number', multipleOf: 0.01 };
/**
 * cents / 100: the double nearest to the decimal, so at most two decimals (docs/openapi.md). Above
 * NGN 894,784.94, ajv's multipleOfPrecision 8 refuses some valid amounts: there an amount is whole
 * naira, lowered until ajv accepts it, so that ajv's verdict is the server's.
 */
function ajvSafe(cents: number, lo: number): number {
  if (cents < 89_478_494) return cents / 100;
  let c = Math.floor(cents / 100) * 100;
  while (c > lo && !matches(AMOUNT, c / 100)) c -= 100;
  return Math.max(c, lo) / 100;
}

function sampleNumber(s: Json, d: Draw, integer: boolean): number {
  const min = (s.minimum as number | undefined) ?? -1_000_000;
  const max = (s.maximum as number | undefined) ?? 1_000_000;
  if (s.multipleOf === 0.01) {
    const lo = Math.ceil(min * 100);
    const hi = Math.floor(max * 100);
    const roll = d.int(0, 9);
    const cents = roll < 4
      ? d.int(lo, Math.min(hi, lo + 500_000)) // within NGN 5,000 of the least
      : roll < 6
      ? d.pick([lo, hi, Math.min(hi, lo + 1)])
      : d.int(lo, hi);
    return ajvSafe(cents, lo);
  }
  if (integer) return d.chance(0.2) ? d.pick([min, max]) : d.int(Math.ceil(min), Math.floor(max));
  return d.from(fc.double({ min, max, noNaN: true }));
}

/** A value of the schema (nearly always: the rules between fields are repaired, and ajv has the last word). */
export function sample(schema: Json, d: Draw, depth = 0): unknown {
  const s = resolve(schema);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return d.pick(s.enum);
  if (Array.isArray(s.anyOf)) {
    const branches = (s.anyOf as Json[]).map(resolve);
    // deep in free-form JSON, no more arrays and objects
    const flat = branches.filter((b) => !['array', 'object'].includes(b.type as string));
    return sample(d.pick(depth > 2 && flat.length > 0 ? flat : branches), d, depth + 1);
  }
  let type = s.type as string | string[] | undefined;
  if (Array.isArray(type)) type = d.pick(type);
  type ??= s.properties ? 'object' : 'string';
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return d.chance(0.5);
    case 'integer':
      return sampleNumber(s, d, true);
    case 'number':
      return sampleNumber(s, d, false);
    case 'string':
      return sampleString(s, d);
    case 'array': {
      const n = d.int(0, 3);
      return Array.from({ length: n }, () => sample((s.items as Json) ?? {}, d, depth + 1));
    }
    case 'object':
      return sampleObject(s, d, depth);
    default:
      throw new Error(`no sampler for type ${type}`);
  }
}

function sampleObject(s: Json, d: Draw, depth: number): Json {
  const props = (s.properties ?? {}) as Record<string, Json>;
  const required = (s.required ?? []) as string[];
  const out: Json = {};
  for (const [k, p] of Object.entries(props)) {
    if (isNever(p)) continue;
    if (required.includes(k) || d.chance(0.5)) out[k] = sample(p, d, depth + 1);
  }
  // free-form members (a webhook's payload)
  if (isObject(s.additionalProperties) && depth < 3 && d.chance(0.5)) {
    const names = (s.propertyNames ?? {}) as Json;
    for (let i = d.int(1, 3); i > 0; i--) {
      const key = sampleString({ ...names, minLength: 1, maxLength: 12 }, d);
      if (!(key in props)) out[key] = sample(s.additionalProperties, d, depth + 1);
    }
  }
  for (let pass = 0; pass < 3; pass++) {
    for (const rule of [s, ...((s.allOf ?? []) as Json[])]) applyRule(rule, s, out, d, depth);
  }
  return out;
}

/** Makes the object follow one rule between fields: if/then/else, oneOf, not required, minProperties. */
function applyRule(rule: Json, s: Json, obj: Json, d: Draw, depth: number): void {
  if (isObject(rule.if)) {
    const branch = matches(rule.if, obj) ? rule.then : rule.else;
    if (isObject(branch)) applyBranch(branch, s, obj, d, depth);
  }
  if (Array.isArray(rule.oneOf)) {
    const branches = rule.oneOf as Json[];
    if (branches.filter((b) => matches(b, obj)).length !== 1) {
      const chosen = d.pick(branches);
      const keep = (chosen.required ?? []) as string[];
      for (const other of branches) {
        if (other === chosen) continue;
        for (const k of (other.required ?? []) as string[]) if (!keep.includes(k)) delete obj[k];
      }
      applyBranch(chosen, s, obj, d, depth);
    }
  }
  const not = rule.not as Json | undefined;
  if (isObject(not) && Array.isArray(not.required)) {
    const keys = not.required as string[];
    if (keys.every((k) => k in obj)) delete obj[d.pick(keys)];
  }
  if (typeof rule.minProperties === 'number') {
    const props = (s.properties ?? {}) as Record<string, Json>;
    while (Object.keys(obj).length < rule.minProperties) {
      const missing = Object.keys(props).filter((k) => !(k in obj) && !isNever(props[k]));
      if (missing.length === 0) break;
      const k = d.pick(missing);
      obj[k] = sample(props[k]!, d, depth + 1);
    }
  }
}

function applyBranch(branch: Json, s: Json, obj: Json, d: Draw, depth: number): void {
  const props = (s.properties ?? {}) as Record<string, Json>;
  const extra = (branch.properties ?? {}) as Record<string, Json>;
  for (const k of (branch.required ?? []) as string[]) {
    if (!(k in obj)) obj[k] = sample(merge(props[k], extra[k]), d, depth + 1);
  }
  for (const [k, p] of Object.entries(extra)) {
    if (k in obj && !matches(p, obj[k])) obj[k] = sample(merge(props[k], p), d, depth + 1);
  }
  const not = branch.not as Json | undefined;
  if (isObject(not) && Array.isArray(not.required)) {
    const keys = not.required as string[];
    if (keys.every((k) => k in obj)) delete obj[d.pick(keys)];
  }
  for (const r of (branch.allOf ?? []) as Json[]) applyRule(r, s, obj, d, depth);
}

// ---- requests ---------------------------------------------------------------------------------

export type AuthMode = 'ok' | 'missing' | 'wrong';

/** A request to send: what the schemas describe, and the credentials. */
export interface Draft {
  op: FuzzOperation;
  /** The query's parameters as the values they stand for (numbers, booleans), or lists of them. */
  query: Json;
  /** The JSON body; undefined: none is sent. */
  body: unknown;
  /** Headers the document describes as parameters (Idempotency-Key); credentials are added when sent. */
  headers: Record<string, string>;
  /** The bearer token (operations with security bearer). */
  token?: string;
  /** A signed operation's signature: right, missing or wrong. */
  signature: AuthMode;
  /** What was broken on purpose, if anything. */
  mutation?: string;
}

/** A schema-valid request of the operation (valid as far as the generator could make it; classify says). */
export function generate(op: FuzzOperation, d: Draw): Draft {
  const qs = querySchema(op.name);
  const query = qs ? sampleObject(qs, d, 0) : {};
  let body: unknown;
  if (op.body && (op.bodyRequired || d.chance(0.8))) body = sampleObject(resolve(op.body), d, 0);
  const headers: Record<string, string> = {};
  if (op.idempotencyKey && d.chance(0.5)) headers[IDEMPOTENCY_KEY] = sampleString(op.idempotencyKey, d);
  return { op, query, body, headers, signature: 'ok' };
}

/** A query value as it travels (text), and read back as what it stands for, as the server reads it. */
function travelled(name: string, query: Json): Json {
  const types = new Map(queryParameters(name).map((p) => [p.name, resolve(p.schema).type]));
  const read = (key: string, v: unknown): unknown => {
    const s = String(v);
    const type = types.get(key);
    if (type === 'integer' && /^-?[0-9]+$/.test(s)) return Number(s);
    if (type === 'boolean' && (s === 'true' || s === 'false')) return s === 'true';
    return s;
  };
  return Object.fromEntries(
    Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => read(k, x)) : read(k, v)]),
  );
}

const roundTrip = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/**
 * The document's verdict on a request: each part against its schema (ajv, as docs/openapi.md
 * advises). An operation without query parameters takes none; one without a requestBody takes no
 * body but an empty one (nothing, null or {}), as the server reads it (shared/core/endpoint.ts).
 */
export function classify(draft: Draft): { valid: boolean; problems: string[] } {
  const { op } = draft;
  const problems: string[] = [];
  const query = travelled(op.name, draft.query);
  if (op.hasQuery) {
    if (!documentAccepts(op.name, 'query', query)) problems.push('query');
  } else if (Object.keys(query).length > 0) problems.push('query (the operation takes none)');
  const body = roundTrip(draft.body);
  if (op.body) {
    if (body === undefined ? op.bodyRequired : !documentAccepts(op.name, 'body', body)) problems.push('body');
  } else if (body !== undefined && body !== null && !(isObject(body) && Object.keys(body).length === 0)) {
    problems.push('body (the operation takes none)');
  }
  const key = draft.headers[IDEMPOTENCY_KEY];
  if (key !== undefined && op.idempotencyKey && !matches(op.idempotencyKey, key)) problems.push(IDEMPOTENCY_KEY);
  return { valid: problems.length === 0, problems };
}

// ---- mutations: one rule broken ----------------------------------------------------------------

const CONTROL = ['\u0000', '\u0001', '\u0007', '\u0008', '\u000b', '\u000c', '\u000e', '\u001b', '\u001f'];

interface Slot {
  where: 'query' | 'body';
  key: string;
  schema: Json;
}

/** The top-level fields of the draft's query and body, with their schemas. */
function slots(draft: Draft): Slot[] {
  const out: Slot[] = [];
  const qs = querySchema(draft.op.name);
  for (const k of Object.keys(draft.query)) {
    out.push({ where: 'query', key: k, schema: resolve(((qs?.properties ?? {}) as Record<string, Json>)[k] ?? {}) });
  }
  if (isObject(draft.body) && draft.op.body) {
    const props = (resolve(draft.op.body).properties ?? {}) as Record<string, Json>;
    for (const k of Object.keys(draft.body)) out.push({ where: 'body', key: k, schema: resolve(props[k] ?? {}) });
  }
  return out;
}

const setSlot = (draft: Draft, slot: Slot, v: unknown) => {
  if (slot.where === 'query') draft.query[slot.key] = v;
  else (draft.body as Json)[slot.key] = v;
};

/** The branch of a nullable field that is not null. */
const nonNull = (s: Json): Json =>
  Array.isArray(s.anyOf) ? resolve((s.anyOf as Json[]).find((b) => resolve(b).type !== 'null') ?? s) : s;

/** Every string inside a free-form value, as a setter. */
function strings(v: unknown, set: (x: unknown) => void, out: ((c: string) => void)[]): void {
  if (typeof v === 'string') out.push((c) => set(v + c));
  else if (Array.isArray(v)) v.forEach((x, i) => strings(x, (y) => (v[i] = y), out));
  else if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      strings(x, (y) => (v[k] = y), out);
      out.push((c) => {
        delete v[k];
        v[`${k}${c}`] = x;
      });
    }
  }
}

type Mutation = (draft: Draft, d: Draw) => string | null;

const MUTATIONS: Record<string, Mutation> = {
  'drop a required field': (draft, d) => {
    const where = d.chance(0.5) ? 'query' : 'body';
    const schema = where === 'query' ? querySchema(draft.op.name) : draft.op.body && resolve(draft.op.body);
    const target = where === 'query' ? draft.query : draft.body;
    const present = ((schema?.required ?? []) as string[]).filter((k) => isObject(target) && k in target);
    if (present.length === 0 || !isObject(target)) return null;
    const k = d.pick(present);
    delete target[k];
    return `drop the required ${where} field ${k}`;
  },
  'wrong type': (draft, d) => {
    const all = slots(draft);
    if (all.length === 0) return null;
    const slot = d.pick(all);
    const type = nonNull(slot.schema).type;
    if (slot.where === 'query') {
      const v = type === 'integer' ? d.pick(['1.5', 'ten', '0x10', '']) : type === 'boolean' ? 'yes' : null;
      if (v === null) return null;
      setSlot(draft, slot, v);
      return `query ${slot.key} as ${JSON.stringify(v)}`;
    }
    const v = type === 'string'
      ? d.pick([7, true, { text: 'x' }, ['x']])
      : type === 'number' || type === 'integer'
      ? d.pick(['12', true, [1]])
      : type === 'boolean'
      ? d.pick(['true', 1, null])
      : d.pick([42, 'text', false]);
    setSlot(draft, slot, v);
    return `body ${slot.key} as ${JSON.stringify(v)}`;
  },
  'a control character': (draft, d) => {
    const setters: ((c: string) => void)[] = [];
    for (const [k, v] of Object.entries(draft.query)) {
      if (typeof v === 'string') setters.push((c) => (draft.query[k] = v + c));
    }
    if (isObject(draft.body)) strings(draft.body, () => {}, setters);
    if (setters.length === 0) return null;
    const c = d.pick(CONTROL);
    d.pick(setters)(c);
    return `a control character U+${c.charCodeAt(0).toString(16).padStart(4, '0')} in a string or key`;
  },
  'an amount with three decimals': (draft, d) => {
    const amounts = slots(draft).filter((s) => nonNull(s.schema).multipleOf === 0.01);
    if (amounts.length === 0) return null;
    const slot = d.pick(amounts);
    const min = (nonNull(slot.schema).minimum as number) ?? 0;
    const v = Math.max(1, Math.ceil(min)) * 1000 + d.int(1, 9); // in thousandths
    setSlot(draft, slot, v / 1000);
    return `${slot.key} ${v / 1000}`;
  },
  'an extra field': (draft, d) => {
    const name = d.pick(['unexpected', 'isAdmin', 'user_id', 'amount_kobo']);
    const body = draft.op.body && resolve(draft.op.body);
    if (d.chance(0.5) && isObject(draft.body) && body?.additionalProperties === false && !(name in draft.body)) {
      (draft.body as Json)[name] = 1;
      return `an extra body field ${name}`;
    }
    if (draft.op.method === 'GET' || d.chance(0.5)) {
      const params = queryParameters(draft.op.name).map((p) => p.name);
      if (params.includes(name)) return null;
      draft.query[name] = '1';
      return `an extra query parameter ${name}`;
    }
    if (!draft.op.body) {
      draft.body = { [name]: 1 };
      return `a body where the operation takes none`;
    }
    return null;
  },
  'out of bounds': (draft, d) => {
    const all = slots(draft).filter((s) => {
      const t = nonNull(s.schema);
      return Array.isArray(t.enum) || typeof t.maxLength === 'number' || typeof t.maximum === 'number' ||
        (typeof t.minLength === 'number' && t.minLength > 0);
    });
    if (all.length === 0) return null;
    const slot = d.pick(all);
    const t = nonNull(slot.schema);
    if (Array.isArray(t.enum)) {
      setSlot(draft, slot, `not_${String(t.enum[0])}`);
      return `${slot.key} outside its enum`;
    }
    if (typeof t.maximum === 'number') {
      const over = d.chance(0.5);
      const v = over ? t.maximum + (t.type === 'integer' ? 1 : 1) : ((t.minimum as number) ?? 0) - 1;
      setSlot(draft, slot, v);
      return `${slot.key} ${v}, out of its bounds`;
    }
    if (typeof t.maxLength === 'number' && (d.chance(0.5) || !t.minLength)) {
      setSlot(draft, slot, 'a'.repeat(t.maxLength + 1));
      return `${slot.key} of ${t.maxLength + 1} characters`;
    }
    const v = 'b'.repeat((t.minLength as number) - 1);
    setSlot(draft, slot, v);
    return `${slot.key} of ${v.length} characters`;
  },
  'a broken rule between fields': (draft, d) => {
    const where = d.chance(0.5) ? 'query' : 'body';
    const schema = where === 'query' ? querySchema(draft.op.name) : draft.op.body && resolve(draft.op.body);
    const target = where === 'query' ? draft.query : draft.body;
    if (!schema || !isObject(target)) return null;
    const props = (schema.properties ?? {}) as Record<string, Json>;
    const rules = [schema, ...((schema.allOf ?? []) as Json[])];
    const options: (() => string)[] = [];
    for (const r of rules) {
      if (Array.isArray(r.oneOf)) {
        const keys = (r.oneOf as Json[]).flatMap((b) => (b.required ?? []) as string[]);
        options.push(() => {
          for (const k of keys) if (!(k in target)) target[k] = sample(props[k]!, d);
          return `all of ${keys.join(', ')} (exactly one is allowed)`;
        });
        options.push(() => {
          for (const k of keys) delete target[k];
          return `none of ${keys.join(', ')} (exactly one is required)`;
        });
      }
      const not = r.not as Json | undefined;
      if (isObject(not) && Array.isArray(not.required)) {
        const keys = not.required as string[];
        options.push(() => {
          for (const k of keys) if (!(k in target)) target[k] = sample(props[k]!, d);
          return `${keys.join(' and ')} together`;
        });
      }
      if (isObject(r.if)) {
        const on = matches(r.if, target);
        const branch = (on ? r.then : r.else) as Json | undefined;
        const needs = (branch?.required ?? []) as string[];
        const forbids = ((branch?.not as Json | undefined)?.required ?? []) as string[];
        for (const k of needs) {
          if (k in target) {
            options.push(() => {
              delete target[k];
              return `without ${k}, which the rule then requires`;
            });
          }
        }
        for (const k of forbids) {
          if (!(k in target) && props[k]) {
            options.push(() => {
              target[k] = sample(props[k]!, d);
              return `with ${k}, which the rule then forbids`;
            });
          }
        }
      }
      if (typeof r.minProperties === 'number') {
        options.push(() => {
          const keep = ((schema.required ?? []) as string[]).filter((k) => k in target);
          for (const k of Object.keys(target)) if (!keep.includes(k)) delete target[k];
          return `fewer than ${r.minProperties} fields`;
        });
      }
    }
    return options.length > 0 ? d.pick(options)() : null;
  },
  'a body that is not an object': (draft, d) => {
    if (!draft.op.body) return null;
    draft.body = d.pick([[], 'text', 42, true]);
    return `the body ${JSON.stringify(draft.body)}`;
  },
  'a malformed Idempotency-Key': (draft, d) => {
    if (!draft.op.idempotencyKey || draft.op.security !== 'bearer') return null;
    draft.headers[IDEMPOTENCY_KEY] = d.pick(['two words', 'k'.repeat(256), '', 'naïve']);
    return `Idempotency-Key ${JSON.stringify(draft.headers[IDEMPOTENCY_KEY]).slice(0, 40)}`;
  },
};

/**
 * The caller of a merchant escrow operation (security merchantKey): the fixture merchant's key on
 * the happy request and on every schema-invalid one (a 400 must not hide behind a 401); else mostly
 * that key, sometimes another merchant's key (its escrows are 404 to it), no key, a session-like
 * token, or a key of the right form that no merchant has.
 */
export function merchantEscrowKeyCaller(
  draft: Draft,
  d: Draw,
  o: { happy: boolean; valid: boolean; key: string; otherKeys?: readonly string[] },
): void {
  if (o.happy || !o.valid) {
    draft.token = o.key;
    return;
  }
  const roll = d.int(0, 99);
  if (roll < 4) draft.token = undefined;
  else if (roll < 8) draft.token = 'not.a.token';
  else if (roll < 12) draft.token = `esk_test_${'0'.repeat(40)}`;
  else if (roll < 25 && o.otherKeys && o.otherKeys.length > 0) draft.token = d.pick(o.otherKeys);
  else draft.token = o.key;
}

/** Breaks one rule of the draft (tries mutations in a random order until one makes it invalid). */
export function mutate(draft: Draft, d: Draw): void {
  const names = d.from(fc.shuffledSubarray(Object.keys(MUTATIONS), { minLength: Object.keys(MUTATIONS).length }));
  for (const name of [...names, ...names]) {
    const before = structuredClone({ query: draft.query, body: draft.body, headers: draft.headers });
    const what = MUTATIONS[name]!(draft, d);
    if (what !== null && !classify(draft).valid) {
      draft.mutation = what;
      return;
    }
    Object.assign(draft, before);
  }
}

// ---- sending ------------------------------------------------------------------------------------

const hmac = (alg: string, secret: string, raw: string) => createHmac(alg, secret).update(raw, 'utf8').digest('hex');

/** The body as sent, and the headers of the operation's security scheme (the test stack's secrets). */
function credentials(draft: Draft, raw: string | undefined, d: Draw | undefined): Record<string, string> {
  const wrong = draft.signature === 'wrong';
  const bytes = raw ?? '';
  const headers: Record<string, string> = {};
  if (draft.signature === 'missing') return headers;
  // the header the document's security scheme names (the scheduler's, a webhook's)
  const scheme = draft.op.security;
  const name = (doc.components.securitySchemes[scheme]?.name ?? '') as string;
  const ALGS = [['HMAC_SHA512_HEX', 'sha512'], ['HMAC_SHA256_HEX', 'sha256'], ['HMAC_SHA1_HEX', 'sha1']] as const;
  switch (scheme) {
    case 'bearer':
      if (draft.token) headers.Authorization = `Bearer ${draft.token}`;
      break;
    case 'merchantKey':
      // a merchant's API key, as a bearer token (merchantEscrowKeyCaller chooses it)
      if (draft.token) headers.Authorization = `Bearer ${draft.token}`;
      break;
    case 'jobsSecret':
      headers[name] = wrong ? 'not-the-secret' : TEST_JOBS_SECRET;
      break;
    case 'identityToken':
      headers[name] = wrong ? 'not-the-token' : TEST_IDENTITY_WEBHOOK_SECRET;
      break;
    case 'paymentsSignature': {
      // the scheme's header, or Paystack's own name for it
      const secret = wrong ? 'not-the-secret' : TEST_PAYMENTS_WEBHOOK_SECRET;
      headers[d?.chance(0.5) ? 'x-paystack-signature' : name] = hmac('sha512', secret, bytes);
      break;
    }
    case 'sumsubDigest': {
      // the algorithm named in <header>-alg, or none (SHA-512)
      const named = d?.chance(0.75) ? d.pick(ALGS) : undefined;
      if (named) headers[`${name}-alg`] = named[0];
      headers[name] = hmac(named?.[1] ?? 'sha512', wrong ? 'not-the-secret' : TEST_KYC_WEBHOOK_SECRET, bytes);
      break;
    }
  }
  return headers;
}

export interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  raw: string | undefined;
}

/** The request as it goes on the wire. */
export function wire(draft: Draft, d?: Draw): Sent {
  const url = new URL(`${baseUrl()}/${draft.op.name}`);
  for (const [k, v] of Object.entries(draft.query)) {
    for (const x of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(x));
  }
  const raw = draft.body === undefined ? undefined : JSON.stringify(draft.body);
  const headers: Record<string, string> = { ...draft.headers, ...credentials(draft, raw, d) };
  if (raw !== undefined) headers['Content-Type'] = 'application/json';
  return { method: draft.op.method, url: url.toString(), headers, raw };
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The request as a curl command. */
export function curl(sent: Sent): string {
  const parts = ['curl -sS', `-X ${sent.method}`, shellQuote(sent.url)];
  for (const [k, v] of Object.entries(sent.headers)) parts.push(`-H ${shellQuote(`${k}: ${v}`)}`);
  if (sent.raw !== undefined) parts.push(`--data-raw ${shellQuote(sent.raw)}`);
  return parts.join(' ');
}

export interface Answer {
  status: number;
  body: unknown;
  /** What tests/support/responses.ts found wrong with the answer against the document, if anything. */
  documentProblem?: string;
}

/** The first moments of a live stream (its replay, if any, and `: ready`), then the stream is closed. */
async function streamStart(res: Response): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/^: ready$/m.test(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

/** Sends it, and checks the answer against the document (tests/support/responses.ts). */
export async function send(sent: Sent): Promise<Answer> {
  const res = await fetch(sent.url, { method: sent.method, headers: sent.headers, body: sent.raw });
  const text = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? await streamStart(res)
    : await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch { /* not JSON: the document check says so */ }
  let documentProblem: string | undefined;
  try {
    await checkSuccessBody(new URL(sent.url).pathname, res.status, body, sent.method, res.headers);
  } catch (err) {
    documentProblem = err instanceof Error ? err.message : String(err);
  }
  return { status: res.status, body, documentProblem };
}

// ---- the properties -----------------------------------------------------------------------------

/** The refusals a schema-valid request may get: they depend on the state, the caller or a limit. */
export const STATE_REFUSALS = [401, 403, 404, 409, 429];
/** ... and while a provider's fake is set to fail: a card declined, a provider refused or unreachable. */
export const PROVIDER_REFUSALS = [402, 502, 503];

/** What is wrong with an answer (nothing: an empty list). */
export function judge(op: FuzzOperation, valid: boolean, answer: Answer, providerFailing: boolean): string[] {
  const problems: string[] = [];
  const { status } = answer;
  const body = isObject(answer.body) ? answer.body : {};
  if (answer.documentProblem) problems.push(answer.documentProblem);
  const declared = op.responses.get(status);
  if (!declared) problems.push(`${status} is not a status the document declares for ${op.name}`);
  if (status >= 400 && declared && !declared.includes(String(body.code))) {
    problems.push(
      `code ${JSON.stringify(body.code)} is not one the document lists for ${status} (${declared.join(', ')})`,
    );
  }
  if (valid) {
    const allowed = (status >= 200 && status < 300) || STATE_REFUSALS.includes(status) ||
      (providerFailing && PROVIDER_REFUSALS.includes(status));
    if (!allowed) {
      problems.push(
        `a schema-valid request got ${status}: expected a 2xx or a refusal of state (${STATE_REFUSALS.join(', ')}${
          providerFailing ? `, ${PROVIDER_REFUSALS.join(', ')} while a provider fails` : ''
        })`,
      );
    }
  } else {
    if (status !== 400) problems.push(`a schema-invalid request got ${status}, not 400`);
    else if (!Array.isArray(body.details) || body.details.length === 0) {
      problems.push('a schema-invalid request got 400 without details');
    }
  }
  return problems;
}
