// The request side of the OpenAPI document (docs/api/openapi.json), compiled as docs/openapi.md
// advises ("Validating a request against the document"): JSON Schema 2020-12, strict, formats
// checked, amounts compared with multipleOfPrecision 8; a query read as an object of its
// parameters, with the operation's x-query-schema. Shared by tests/unit/request-rules.test.ts
// (the document against the server's own validation) and tests/integration/fuzz.clock.test.ts (the
// running server, fuzzed from these schemas).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as typeof addFormatsModule;

export type Json = Record<string, unknown>;
export type Where = 'query' | 'body';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The committed document, parsed. */
// deno-lint-ignore no-explicit-any -- a parsed JSON document, read by path
export const doc = JSON.parse(readFileSync(`${root}docs/api/openapi.json`, 'utf8')) as any;

/** The validator docs/openapi.md describes: 2020-12, strict schemas, formats, amounts compared to 1e-8. */
export const requestAjv = new Ajv2020({
  strict: true,
  // `required` inside if/then/oneOf names properties declared beside them, not in the branch
  strictRequired: false,
  // the rules' branches (if, then, oneOf) do not repeat type: object
  strictTypes: false,
  allErrors: true,
  multipleOfPrecision: 8,
});
addFormats(requestAjv);

/** An operation of the document: its method's object. */
// deno-lint-ignore no-explicit-any -- read by path
export const operation = (name: string): any => Object.values(doc.paths[`/${name}`] ?? {})[0];

/** The method of an operation, upper case. */
export const methodOf = (name: string): string => Object.keys(doc.paths[`/${name}`] ?? {})[0]!.toUpperCase();

/** Every operation of the document, by name (its path without the slash), sorted. */
export const operationNames = (): string[] => Object.keys(doc.paths).map((p) => p.slice(1)).sort();

/** A request schema of the document, standalone: its refs to components become local $defs. */
export function standalone(schema: Json): Json {
  const text = JSON.stringify({ ...schema, $defs: doc.components.schemas });
  return JSON.parse(text.replaceAll('"#/components/schemas/', '"#/$defs/'));
}

export interface QueryParameter {
  in: string;
  name: string;
  required: boolean;
  schema: Json;
}

/** The query parameters of an operation. */
export const queryParameters = (name: string): QueryParameter[] =>
  ((operation(name)?.parameters ?? []) as QueryParameter[]).filter((p) => p.in === 'query');

/** The query of an operation as one JSON Schema: each parameter a property, and x-query-schema's rules. */
export function querySchema(name: string): Json | undefined {
  const params = queryParameters(name);
  if (params.length === 0) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    required: params.filter((p) => p.required).map((p) => p.name),
    additionalProperties: false,
    ...(operation(name)['x-query-schema'] ?? {}),
  };
}

/** The JSON body's schema of an operation, if it takes one. */
export const bodySchema = (name: string): Json | undefined =>
  operation(name)?.requestBody?.content['application/json'].schema;

const validators = new Map<string, ValidateFunction>();

/** The compiled query or body schema of an operation (throws when it takes none). */
export function documentValidator(name: string, where: Where): ValidateFunction {
  const key = `${name} ${where}`;
  let v = validators.get(key);
  if (!v) {
    const schema = where === 'query' ? querySchema(name) : bodySchema(name);
    if (!schema) throw new Error(`${name} has no ${where} in the document`);
    v = requestAjv.compile(standalone(schema));
    validators.set(key, v);
  }
  return v;
}

/** Does the document accept this query (parameters as the values they stand for) or body? */
export function documentAccepts(name: string, where: Where, value: unknown): boolean {
  return documentValidator(name, where)(value) as boolean;
}
