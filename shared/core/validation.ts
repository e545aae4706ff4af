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

/** How many characters a string has: Unicode code points, as JSON Schema and Postgres' char_length count them. */
export const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * A string of min to max characters, counted in code points (an emoji is one character, as JSON
 * Schema's minLength and maxLength and Postgres' char_length count it), not trimmed. Its JSON Schema
 * says the same bounds; the control rule's pattern is added by the document's generator.
 */
export const chars = (min: number, max: number, message?: string) =>
  z
    .string()
    .refine(
      (s) => codePoints(s) >= min,
      message ?? (min === 1 ? 'must not be empty' : `must be at least ${min} characters`),
    )
    .refine((s) => codePoints(s) <= max, message ?? `must be at most ${max} characters`)
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max });

export const passwordSchema = chars(8, 128);

export const otpCodeSchema = z.string().regex(/^[0-9]{6}$/, 'must be 6 digits');

// ---- the text rule ---------------------------------------------------------------------------

/**
 * The characters no string of a request may hold, as the body of a character class: NUL and the
 * other C0 control codes but tab, line feed and carriage return (multi-line descriptions and
 * messages). Postgres refuses NUL in text and jsonb, so it would otherwise surface as a 500. The
 * server's check (controlCharacterProblems) and the document's patterns are built from this.
 */
export const CONTROL_CLASS = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f';
const CONTROL = new RegExp(`[${CONTROL_CLASS}]`);
export const CONTROL_MESSAGE =
  'must not contain control characters (NUL and C0 codes other than tab, line feed and carriage return)';

/** A string without a forbidden control character: the pattern of every request string that has none of its own. */
export const NO_CONTROL_PATTERN = `^[^${CONTROL_CLASS}]*$`;

/**
 * Characters that change how text around them is shown without being seen themselves, as the body
 * of a character class: the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069), which can make `txt.exe` read `exe.txt`; the zero-width characters (U+200B-U+200D,
 * U+2060 and U+FEFF); and the left-to-right, right-to-left and Arabic letter marks (U+200E, U+200F,
 * U+061C), invisible too: a name needs none of them to read in its own script, and with them two
 * names that look the same differ. Refused in names, titles and usernames (nameText).
 */
export const INVISIBLE_CLASS = '\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060\\u2066-\\u2069\\ufeff';
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]`);
export const INVISIBLE_MESSAGE = 'must not contain bidirectional controls or invisible characters ' +
  '(U+061C, U+200B-U+200F, U+202A-U+202E, U+2060, U+2066-U+2069, U+FEFF)';

/**
 * The pattern of a trimmed text of at least `min` characters: no forbidden control character (nor
 * any character of the class body `also`), and (min > 0) a first and a last character that are not
 * white space at least min - 1 apart, so the text is still min characters long once trimmed. `\s` is
 * the white space String.trim removes.
 */
export function textPattern(min: number, also = ''): string {
  const any = `[^${CONTROL_CLASS}${also}]`;
  const solid = `[^\\s${CONTROL_CLASS}${also}]`;
  if (min <= 0) return also ? `^${any}*$` : NO_CONTROL_PATTERN;
  if (min === 1) return `^${any}*${solid}${any}*$`;
  return `^${any}*${solid}${any}{${min - 2},}${solid}${any}*$`;
}

/** The bounds after trimming, in words: the description of a text field. */
const textDescription = (min: number, max: number) =>
  min > 0
    ? `${min} to ${max} characters once leading and trailing white space is trimmed (so never blank)`
    : `At most ${max} characters once leading and trailing white space is trimmed`;

/**
 * A trimmed text of min to max characters (code points) from `sent` (the string schema with any
 * rule on the text as sent), and the JSON Schema that states it: minLength and maxLength (of the
 * text as sent, so never looser than the server), `pattern` and `description`.
 */
const trimmedText = (min: number, max: number, sent: z.ZodString, pattern: string, description: string) =>
  sent
    .trim()
    .refine((s) => codePoints(s) >= min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .refine((s) => codePoints(s) <= max, `must be at most ${max} characters`)
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max, pattern, description });

/**
 * A text field: leading and trailing white space trimmed, then min to max characters (code points),
 * never blank when min > 0. Its JSON Schema states the same: a pattern for the trimmed minimum and
 * the control rule, and a description of the bounds after trimming.
 */
export const text = (min: number, max: number) =>
  trimmedText(min, max, z.string(), textPattern(min), textDescription(min, max));

/**
 * A name or a title (a person's names, an escrow's or a milestone's title, a bank account's name):
 * a text() that also holds no bidirectional control or invisible character (INVISIBLE_CLASS),
 * checked on the value as sent (String.trim would remove a leading U+FEFF first). Its pattern says
 * both rules, so the document states it.
 */
export const nameText = (min: number, max: number) =>
  trimmedText(
    min,
    max,
    z.string().refine((s) => !INVISIBLE.test(s), { message: INVISIBLE_MESSAGE, abort: true }),
    textPattern(min, INVISIBLE_CLASS),
    `${textDescription(min, max)}; no bidirectional control or invisible character`,
  );

/**
 * True when no string holding a forbidden control character can match `pattern` (a JSON Schema
 * pattern, ECMA-262): it has no `.`, no `\s`, `\S`, `\D`, `\W` or `\p`, no negated class but one
 * that excludes CONTROL_CLASS, and no character or range that reaches a forbidden code. Cautious:
 * false means "not shown", and the document then adds the control rule beside the pattern.
 */
export function excludesControl(pattern: string): boolean {
  const forbidden = (from: number, to: number) => {
    for (let c = from; c <= Math.min(to, 0x1f); c++) if (c !== 0x09 && c !== 0x0a && c !== 0x0d) return true;
    return false;
  };
  let inClass = false;
  let rangeFrom: number | null = null;
  let last: number | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    let code: number | null = null;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      const hex = next === 'u'
        ? /^u([0-9a-fA-F]{4})/.exec(pattern.slice(i + 1))
        : next === 'x'
        ? /^x([0-9a-fA-F]{2})/.exec(pattern.slice(i + 1))
        : null;
      if (hex) {
        code = parseInt(hex[1] as string, 16);
        i += hex[0].length;
      } else if ('sSDWpPvfc0'.includes(next) || (inClass && next === 'b') || next === 'u' || next === 'x') {
        return false;
      } else {
        i += 1;
        code = next === 't'
          ? 0x09
          : next === 'n'
          ? 0x0a
          : next === 'r'
          ? 0x0d
          : 'dwbB'.includes(next) || /[1-9]/.test(next)
          ? null
          : next.charCodeAt(0);
      }
    } else if (!inClass && ch === '[') {
      if (pattern[i + 1] === '^') {
        const end = pattern.indexOf(']', i + 2);
        if (end < 0 || !pattern.slice(i + 2, end).includes(CONTROL_CLASS)) return false;
        i = end;
        continue;
      }
      inClass = true;
      last = null;
      continue;
    } else if (inClass && ch === ']') {
      inClass = false;
      continue;
    } else if (inClass && ch === '-' && last !== null && pattern[i + 1] !== ']') {
      rangeFrom = last;
      continue;
    } else if (!inClass && ch === '.') {
      return false;
    } else {
      code = ch.charCodeAt(0);
    }
    if (code === null) {
      last = null;
      continue;
    }
    if (forbidden(rangeFrom ?? code, code)) return false;
    rangeFrom = null;
    last = code;
  }
  return true;
}

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

/**
 * One problem per string (value or object key) anywhere in a parsed JSON body or query that holds
 * a forbidden control character (CONTROL_CLASS), named by its dotted path. Checked before the schemas,
 * for every endpoint, so no field can forget it; the document states it on every string
 * (scripts/lib/spec/openapi.ts).
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

const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * A parsed JSON body with every unpaired surrogate (an escape such as \ud800 that JSON text may
 * hold, which is no Unicode character) read as U+FFFD, in values and keys at any depth: what a
 * text column stores for it anyway, where a json column refuses it (a 500). One code point for
 * another, neither white space nor a control character: the schemas' verdict is unchanged.
 */
export function wellFormed(input: unknown): unknown {
  if (typeof input === 'string') return input.replace(LONE_SURROGATE, '\ufffd');
  if (Array.isArray(input)) return input.map(wellFormed);
  if (input !== null && typeof input === 'object') {
    return Object.fromEntries(
      Object.entries(input).map(([k, v]) => [k.replace(LONE_SURROGATE, '\ufffd'), wellFormed(v)]),
    );
  }
  return input;
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

// ---- identifiers, dates, URLs -------------------------------------------------------------------

/**
 * Any UUID written as 8-4-4-4-12 hex digits, in either case, of any version and variant (the nil
 * and max UUIDs included): what Postgres' uuid type reads. An id that names nothing is the
 * operation's 404, never a 400. Its JSON Schema: format uuid and this pattern.
 */
export const uuidSchema = z.guid({ message: 'must be a UUID' });

/**
 * A calendar date from the year 0001 (Postgres has no year 0000), leap years counted. Written
 * without lookaheads, so any regex dialect reads it.
 */
const DATE = '(?:(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29|' +
  '(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-' +
  '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8])))';

/** YYYY-MM-DD (a real date, from 0001-01-01): the server's check and the document's pattern. */
export const DATE_PATTERN = `^${DATE}$`;

/**
 * An ISO 8601 timestamp Postgres reads: a date from the year 0001, a time with seconds (and any
 * fraction), and Z or an offset under 16 hours (Postgres refuses larger ones; zone names, a lower
 * case t or z, a leap second and a missing colon are not accepted either).
 */
export const TIMESTAMP_PATTERN =
  `^${DATE}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:Z|[+-](?:0[0-9]|1[0-5]):[0-5][0-9])$`;

export const dateSchema = z
  .string()
  .regex(new RegExp(DATE_PATTERN), 'must be a date (YYYY-MM-DD) from 0001-01-01 on')
  .meta({ format: 'date' });

// Valid ISO 8601 that Postgres cannot read (year 0000, UTC offsets of 16 hours or more) would fail
// the query with a 500, so such a timestamp is refused here, for every list cursor and the job's clock.
export const timestampSchema = z
  .string()
  .regex(
    new RegExp(TIMESTAMP_PATTERN),
    'must be an ISO 8601 timestamp (YYYY-MM-DDThh:mm:ss, Z or an offset) from the year 0001 on, with a UTC offset under 16 hours',
  )
  .meta({ format: 'date-time' });

export const queryTimestamp = timestampSchema;

/**
 * An http(s) URL the server accepts: a host name of ASCII letters, digits, `_` and single hyphens
 * (its last label not starting with a digit, so it is never read as an IPv4 number; no `xn--`
 * label, which URL parsers disagree on) or an IPv4 address, an optional port up to 65535, then an
 * optional path, query and fragment of the characters RFC 3986 allows there (anything else
 * percent-encoded). Every such string is a URI (RFC 3986) and a URL the WHATWG parser reads; the
 * unit test checks both.
 */
const LABEL = '[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*';
const TOP_LABEL = '[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const PORT = '(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
const PCHAR = "(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})";
const URL_AFTER_SCHEME = `://(?:(?:${LABEL}\\.)*${TOP_LABEL}|${OCTET}(?:\\.${OCTET}){3})` +
  `(?::${PORT})?(?:/(?:${PCHAR}|/)*)?(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?$`;
export const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?${URL_AFTER_SCHEME}`;

/** HTTP_URL_PATTERN with https only: a URL other people's apps load (an avatar), never in the clear. */
export const HTTPS_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]${URL_AFTER_SCHEME}`;

/**
 * An http(s) URL of at most 2048 characters matching HTTP_URL_PATTERN: the one check the server
 * makes, and what the document says (format uri and that pattern).
 */
export const httpUrl = () =>
  z
    .string()
    .max(2048, 'must be at most 2048 characters')
    .regex(
      new RegExp(HTTP_URL_PATTERN),
      'must be an http(s) URL with a host name or IPv4 address (no user name, IPv6 or xn-- host)',
    )
    .meta({ format: 'uri' });

/**
 * httpUrl() with https only (`avatar_url`: an address other users' apps fetch, which must not
 * travel in the clear or be rewritten on the way): the same form and bound, and the document shows
 * HTTPS_URL_PATTERN.
 */
export const httpsUrl = () =>
  z
    .string()
    .max(2048, 'must be at most 2048 characters')
    .regex(
      new RegExp(HTTPS_URL_PATTERN),
      'must be an https URL with a host name or IPv4 address (no user name, IPv6 or xn-- host)',
    )
    .meta({ format: 'uri' });
