// Every answer the tests receive from the real server is checked twice. A success's `data` against
// the response schema of the endpoint that gave it (`meta.response`, from shared/*/schema.ts: strict
// objects, so a key the schema does not name fails too); and every answer, refusals included,
// against the OpenAPI document (docs/api/openapi.json): its status must be one the operation
// declares, its body must match that status's schema, and Retry-After / Idempotent-Replayed must
// be declared where they are sent. The helpers that call functions (api.ts `call`, the fakes'
// webhook deliveries, the typed client's middleware in client.ts, the supabase-js suite's helpers)
// run it, so an answer that drifts from the declared shape fails the test that received it.
//
// With RESPONSE_CHECK_LOG=<file> set, the name of each endpoint whose answer was checked is
// appended to that file (once per test process): how many endpoints a run covered. With
// ANSWER_STATUS_LOG=<file> (npm test sets it), each operation and status: the declared refusals
// no test received are then named (scripts/lib/refusal-coverage.ts).
import { appendFileSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
// ajv-formats is CommonJS: its default export arrives as the module object under some loaders
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as typeof addFormatsModule;
const FUNCTION_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const metas = new Map<string, Promise<EndpointMeta | undefined>>();
const logged = new Set<string>();

/** The endpoint definition of supabase/functions/<name>/handler.ts (undefined: no such function). */
export function endpointMeta(name: string): Promise<EndpointMeta | undefined> {
  let meta = metas.get(name);
  if (!meta) {
    meta = FUNCTION_NAME.test(name)
      ? import(pathToFileURL(`${root}supabase/functions/${name}/handler.ts`).href).then(
        (mod: { default?: { meta?: EndpointMeta } }) => mod.default?.meta,
        () => undefined,
      )
      : Promise.resolve(undefined);
    metas.set(name, meta);
  }
  return meta;
}

export class ResponseShapeError extends Error {
  override name = 'ResponseShapeError';
}

/** The function name in a call target: 'escrow-get', '/escrow-get?escrow_id=...' or a full URL. */
export function functionName(target: string): string {
  const path = target.split(/[?#]/)[0] as string;
  return path.split('/').filter(Boolean).pop() ?? '';
}

/**
 * Checks the `data` of a success envelope answered by `target` against that endpoint's response
 * schema. Throws ResponseShapeError naming the endpoint, each problem's path and the value there.
 */
export async function checkResponseData(target: string, data: unknown): Promise<void> {
  const name = functionName(target);
  const meta = await endpointMeta(name);
  if (!meta) {
    throw new ResponseShapeError(`${name}: a success answer, but there is no supabase/functions/${name}/handler.ts`);
  }
  if (!meta.response) throw new ResponseShapeError(`${name}: its endpoint({...}) declares no response schema`);
  const parsed = meta.response.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${['data', ...i.path.map(String)].join('.')}: ${i.message}`);
    throw new ResponseShapeError(
      `${name} answered ${meta.status} with data that does not match its response schema:\n${problems.join('\n')}\n` +
        `data: ${JSON.stringify(data).slice(0, 2000)}`,
    );
  }
  appendOnce('RESPONSE_CHECK_LOG', name);
}

/** The committed OpenAPI document, compiled once for checking answers against it. */
let openApi: { doc: OpenApiDoc; ajv: Ajv2020 } | undefined;
interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> }
    >
  >;
}

/** Answer headers the document declares where they are sent; the others (CORS, x-request-id) are not described. */
const DECLARED_HEADERS = ['retry-after', 'idempotent-replayed'];
function documentChecker() {
  if (!openApi) {
    const doc = JSON.parse(readFileSync(`${root}docs/api/openapi.json`, 'utf8')) as OpenApiDoc;
    // strict: false, because the document is registered whole (its OpenAPI keywords are not JSON Schema)
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi');
    openApi = { doc, ajv };
  }
  return openApi;
}

/**
 * Appends `line` to the file the variable names, once per test process: RESPONSE_CHECK_LOG (each
 * endpoint whose answer was checked) and ANSWER_STATUS_LOG (each operation and status answered;
 * npm test sets it, and scripts/lib/refusal-coverage.ts then finds declared refusals no test saw).
 */
function appendOnce(variable: 'RESPONSE_CHECK_LOG' | 'ANSWER_STATUS_LOG', line: string): void {
  const file = process.env[variable];
  const key = `${variable} ${line}`;
  if (!file || logged.has(key)) return;
  logged.add(key);
  appendFileSync(file, `${line}\n`);
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/**
 * Checks an answer, success or refusal, against docs/api/openapi.json: the operation must declare
 * its status, the body must match that status's schema (the envelope and its `data`), and a
 * Retry-After or Idempotent-Replayed header must be one that status declares. An answer to another
 * method than the operation's (a 405, OPTIONS) is not the operation's, and is left alone.
 */
export function checkAgainstDocument(
  target: string,
  method: string,
  httpStatus: number,
  body: unknown,
  headers?: Headers,
): void {
  const name = functionName(target);
  const { doc, ajv } = documentChecker();
  const path = doc.paths[`/${name}`];
  if (!path) {
    throw new ResponseShapeError(`${name} answered, but docs/api/openapi.json has no /${name}: run npm run openapi`);
  }
  const operation = path[method.toLowerCase()];
  if (!operation) return;
  const response = operation.responses[String(httpStatus)];
  if (!response) {
    throw new ResponseShapeError(
      `${name} answered ${httpStatus}, a status docs/api/openapi.json does not declare for it ` +
        `(declared: ${
          Object.keys(operation.responses).join(', ')
        }; add it to the endpoint's refusals, then npm run openapi)\n` +
        `body: ${JSON.stringify(body).slice(0, 1000)}`,
    );
  }
  const code = httpStatus >= 400 && body && typeof body === 'object' ? (body as { code?: unknown }).code : undefined;
  appendOnce('ANSWER_STATUS_LOG', typeof code === 'string' ? `${name} ${httpStatus} ${code}` : `${name} ${httpStatus}`);
  for (const header of DECLARED_HEADERS) {
    const declared = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
    if (headers?.has(header) && !declared.includes(header)) {
      throw new ResponseShapeError(
        `${name} answered ${httpStatus} with a ${header} header that docs/api/openapi.json does not declare there`,
      );
    }
  }
  if (!response.content) return;
  if (response.content['text/event-stream']) {
    checkEventStream(name, httpStatus, body, ajv);
    return;
  }
  const ref = `openapi#/${
    pointer(
      'paths',
      `/${name}`,
      method.toLowerCase(),
      'responses',
      String(httpStatus),
      'content',
      'application/json',
      'schema',
    )
  }`;
  const validate = ajv.getSchema(ref);
  if (!validate) throw new ResponseShapeError(`${name}: no schema at ${ref}`);
  if (!validate(body)) {
    const problems = (validate.errors ?? []).map((e) => `  ${e.instancePath || '/'}: ${e.message}`);
    throw new ResponseShapeError(
      `${name} answered ${httpStatus} with a body that does not match docs/api/openapi.json:\n${
        problems.join('\n')
      }\n` +
        `body: ${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

/**
 * The text of a stream the document declares as `text/event-stream`: every event's name is one of
 * its `x-events`, and its `data` matches that event's schema.
 */
function checkEventStream(
  name: string,
  httpStatus: number,
  body: unknown,
  ajv: ReturnType<typeof documentChecker>['ajv'],
) {
  if (typeof body !== 'string') {
    throw new ResponseShapeError(`${name} answered ${httpStatus}: an event stream, but the body is not text`);
  }
  for (const block of body.split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event === undefined || data === undefined) continue;
    const ref = `openapi#/${
      pointer(
        'paths',
        `/${name}`,
        'get',
        'responses',
        String(httpStatus),
        'content',
        'text/event-stream',
        'x-events',
        event,
      )
    }`;
    const validate = ajv.getSchema(ref);
    if (!validate) throw new ResponseShapeError(`${name}: an event \`${event}\` the document does not declare`);
    if (!validate(JSON.parse(data))) {
      const problems = (validate.errors ?? []).map((e) => `  ${e.instancePath || '/'}: ${e.message}`);
      throw new ResponseShapeError(`${name}: a \`${event}\` event whose data does not match:\n${problems.join('\n')}`);
    }
  }
}

/**
 * Checks a parsed answer: against the document (every status), and a success envelope's `data`
 * against the endpoint's response schema too.
 */
export async function checkSuccessBody(
  target: string,
  httpStatus: number,
  body: unknown,
  method?: string,
  headers?: Headers,
): Promise<void> {
  const meta = await endpointMeta(functionName(target));
  const envelope = body as { success?: unknown; data?: unknown } | null | undefined;
  const ok = httpStatus >= 200 && httpStatus < 300 && (method ?? meta?.method) === meta?.method;
  if (ok && meta?.envelope === false) await checkResponseData(target, body);
  else if (ok && envelope && typeof envelope === 'object' && envelope.success === true) {
    await checkResponseData(target, envelope.data);
  }
  if (meta) checkAgainstDocument(target, method ?? meta.method, httpStatus, body, headers);
}
