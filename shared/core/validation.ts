// zod helpers shared by every schema: phone numbers, issue -> {field, message} conversion, and
// query-string parsing. Every object schema is strict: unknown fields are reported, not dropped.
import { z } from 'zod';
import type { FieldProblem } from './http.ts';

export const NIGERIAN_PHONE = /^(\+234[0-9]{10}|0[0-9]{10})$/;

/** +234XXXXXXXXXX or 0XXXXXXXXXX in, E.164 (+234 and 10 digits) out. */
export function toE164(phone: string): string {
  return phone.startsWith('+234') ? phone : `+234${phone.slice(1)}`;
}

export const phoneSchema = z
  .string()
  .regex(NIGERIAN_PHONE, 'must be +234 followed by 10 digits, or 0 followed by 10 digits')
  .transform(toE164);

export const passwordSchema = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(128, 'must be at most 128 characters');

export const otpCodeSchema = z.string().regex(/^[0-9]{6}$/, 'must be 6 digits');

/** A required, non-blank text field with a maximum length (leading/trailing spaces trimmed). */
export const text = (min: number, max: number) =>
  z
    .string()
    .trim()
    .min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`);

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    const received = (issue as { input?: unknown }).input;
    if (received === undefined && /received undefined/.test(issue.message)) return 'is required';
    const expected = issue.expected === 'int' ? 'integer' : String(issue.expected);
    return `must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
  }
  if (issue.code === 'invalid_value' && 'values' in issue) {
    return `must be one of: ${issue.values.map(String).join(', ')}`;
  }
  return issue.message;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * One {field, message} per problem; field is the dotted path (unknown keys are named one by one).
 * With the input given, a field that is simply absent is reported as "is required" whatever rule
 * it would have broken.
 */
export function zodDetails(error: z.ZodError, root = 'body', input?: unknown): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join('.');
    if (
      input !== undefined && issue.path.length > 0 && issue.code !== 'custom' &&
      valueAt(input, issue.path) === undefined
    ) {
      out.push({ field: base, message: 'is required' });
      continue;
    }
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ field: base ? `${base}.${key}` : key, message: 'is not an accepted field' });
      }
      continue;
    }
    out.push({ field: base || root, message: describe(issue) });
  }
  return out;
}

// NUL and the other C0 control characters have no place in any text a user sends (Postgres
// refuses NUL in text and jsonb, so it would otherwise surface as a 500); tab, line feed and
// carriage return are allowed (multi-line descriptions and messages).
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;
export const CONTROL_MESSAGE =
  'must not contain control characters (NUL and C0 codes other than tab, line feed and carriage return)';

/**
 * One problem per string (value or object key) anywhere in a parsed JSON body or query that holds
 * a forbidden control character, named by its dotted path. Checked before the schemas, for every
 * endpoint, so no field can forget it.
 */
export function controlCharacterProblems(input: unknown, path: string[] = []): FieldProblem[] {
  if (typeof input === 'string') {
    return CONTROL.test(input) ? [{ field: path.join('.') || 'body', message: CONTROL_MESSAGE }] : [];
  }
  if (Array.isArray(input)) return input.flatMap((v, i) => controlCharacterProblems(v, [...path, String(i)]));
  if (input !== null && typeof input === 'object') {
    return Object.entries(input).flatMap(([k, v]) =>
      CONTROL.test(k)
        ? [{
          field: [...path, k.replace(new RegExp(CONTROL.source, 'g'), '?')].join('.'),
          message: 'is not an accepted field',
        }]
        : controlCharacterProblems(v, [...path, k])
    );
  }
  return [];
}

/** URL query -> plain object; a parameter given twice is kept as an array (and then rejected). */
export function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/**
 * Query-string helpers: values arrive as strings. Their JSON Schema (the OpenAPI document) is the
 * typed parameter a client sends, from .meta: an integer with its bounds, a boolean.
 */
export const queryInt = (def: number, min: number, max: number) =>
  z
    .string()
    .regex(/^-?[0-9]+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((v) => v ?? def)
    .meta({ type: 'integer', minimum: min, maximum: max, description: `${min} to ${max}; ${def} when omitted` });

export const queryBool = (def: boolean) =>
  z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? def : v === 'true'))
    .meta({ type: 'boolean', description: `${def} when omitted` });

// Valid ISO 8601 that Postgres cannot read (year 0000, UTC offsets of 16 hours or more) would fail
// the query with a 500, so such a cursor is refused here, for every list.
export const queryTimestamp = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 timestamp' })
  .refine(
    (v) => !v.startsWith('0000-') && !/[+-](1[6-9]|2[0-9]):?[0-9]{2}$/.test(v),
    'must be a timestamp from the year 0001 on, with a UTC offset under 16 hours',
  );
