// Rules between the fields of a request (a field required or refused according to another, one of
// two fields, at least n fields, a format that depends on a type). Each rule is written once, as
// data, and gives both what the server checks (a zod refinement: one {field, message} detail per
// broken rule) and what the OpenAPI document says (a JSON Schema 2020-12 fragment of the object:
// oneOf, if/then/else, not, minProperties), so the two cannot drift apart.
//
//   export const body = withRules(z.strictObject({...}), [
//     onlyWhen('card_id', { method: 'saved_card' }, { required: true }),
//   ]);
//
// One rule is merged into the object's JSON Schema; several go into its allOf, one entry each,
// with a description saying the rule in words.
import type { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** A rule of an object: its JSON Schema fragment, and the problems of a parsed value. */
export interface Rule {
  /** The fragment the object's JSON Schema carries (with a description in words). */
  readonly json: JsonSchema;
  /** One {path, message} per way `value` breaks the rule; none when it keeps it. */
  problems(value: Record<string, unknown>): { path: string[]; message: string }[];
}

/** A condition on the fields of an object: each named field equals the value given (or one of the values). */
export type Condition = Record<string, string | readonly string[]>;

const present = (value: Record<string, unknown>, key: string) => value[key] !== undefined;

function holds(cond: Condition, value: Record<string, unknown>): boolean {
  return Object.entries(cond).every(([k, v]) =>
    typeof v === 'string' ? value[k] === v : (v as readonly string[]).includes(value[k] as string)
  );
}

function conditionJson(cond: Condition): JsonSchema {
  return {
    properties: Object.fromEntries(
      Object.entries(cond).map(([k, v]) => [k, typeof v === 'string' ? { const: v } : { enum: [...v] }]),
    ),
    required: Object.keys(cond),
  };
}

function conditionWords(cond: Condition): string {
  return Object.entries(cond)
    .map(([k, v]) => `${k} is ${typeof v === 'string' ? v : (v as readonly string[]).join(' or ')}`)
    .join(' and ');
}

/**
 * `key` is accepted only when `cond` holds (and, with required, must then be sent): "password is
 * only accepted when context is login". JSON Schema: if cond then required, else not required.
 */
export function onlyWhen(key: string, cond: Condition, opts: { required?: boolean } = {}): Rule {
  const words = conditionWords(cond);
  return {
    json: {
      description: opts.required
        ? `${key} is required when ${words}, and accepted only then`
        : `${key} is accepted only when ${words}`,
      if: conditionJson(cond),
      ...(opts.required ? { then: { required: [key] } } : {}),
      else: { not: { required: [key] } },
    },
    problems: (value) => {
      const when = holds(cond, value);
      if (when && opts.required && !present(value, key)) return [{ path: [key], message: `is required when ${words}` }];
      if (!when && present(value, key)) return [{ path: [key], message: `is only accepted when ${words}` }];
      return [];
    },
  };
}

/**
 * When `cond` holds, `key` (if sent) must match `pattern` (ECMA-262, tested with the u flag on the
 * value as sent, before any transform): an identity number's format per type.
 */
export function patternWhen(key: string, cond: Condition, pattern: string, message: string): Rule {
  const re = new RegExp(pattern, 'u');
  return {
    json: {
      description: `When ${conditionWords(cond)}: ${key} ${message}`,
      if: conditionJson(cond),
      then: { properties: { [key]: { pattern } } },
    },
    problems: (value) => {
      const v = value[key];
      return holds(cond, value) && typeof v === 'string' && !re.test(v) ? [{ path: [key], message }] : [];
    },
  };
}

/** Exactly one of `keys` is sent; a detail on `field` (the first key by default) otherwise. */
export function exactlyOne(keys: readonly string[], message: string, field = keys[0] as string): Rule {
  return {
    json: {
      description: `Exactly one of ${keys.join(', ')}`,
      oneOf: keys.map((k) => ({ required: [k] })),
    },
    problems: (value) => keys.filter((k) => present(value, k)).length === 1 ? [] : [{ path: [field], message }],
  };
}

/** Not all of `keys` together; a detail on `field` (the last key by default) otherwise. */
export function notTogether(keys: readonly string[], message: string, field = keys[keys.length - 1] as string): Rule {
  return {
    json: { description: `Not ${keys.join(' and ')} together`, not: { required: [...keys] } },
    problems: (value) => keys.every((k) => present(value, k)) ? [{ path: [field], message }] : [],
  };
}

/** At least `n` fields (an object with nothing to change is refused); a detail on the body otherwise. */
export function minFields(n: number, message: string, description: string): Rule {
  return {
    json: { description, minProperties: n },
    problems: (value) => Object.keys(value).filter((k) => present(value, k)).length >= n ? [] : [{ path: [], message }],
  };
}

/**
 * The object schema with its rules: the server refines with each rule's problems (a custom issue
 * per problem, which the endpoint answers as a 400 detail; only once every field is valid), and the schema's metadata carries the
 * rules' JSON Schema, which z.toJSONSchema merges into the object's (scripts/lib/spec/openapi.ts).
 */
export function withRules<S extends z.ZodType<Record<string, unknown>>>(schema: S, rules: readonly Rule[]): S {
  const refined = schema.superRefine((value, ctx) => {
    // rules between fields judge fields that are each valid: a field's own problem (an unknown key
    // included) is the one detail about it
    if ((ctx as unknown as { issues?: unknown[] }).issues?.length) return;
    for (const rule of rules) {
      for (const p of rule.problems(value)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    }
  }) as S;
  const json = rules.length === 1 ? (rules[0] as Rule).json : { allOf: rules.map((r) => r.json) };
  return refined.meta(json) as S;
}

/** The rules' JSON Schema keywords of an object schema's JSON (what withRules added), for the document. */
export const RULE_KEYWORDS = ['allOf', 'oneOf', 'anyOf', 'not', 'if', 'then', 'else', 'minProperties'] as const;
