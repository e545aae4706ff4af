// Every successful answer the tests receive from the real server is checked against the response
// schema of the endpoint that gave it (`meta.response`, from shared/schemas/*): strict objects, so
// a key the schema does not name fails too. The helpers that call functions (api.ts `call`, the
// Paystack fake's webhook deliveries in paystack.ts, supabase-js `invoke` in the e2e suite) run
// it, so every suite checks the real answers it receives, and an answer that drifts from the
// declared shape fails the test that received it.
//
// With RESPONSE_CHECK_LOG=<file> set, the name of each endpoint whose answer was checked is
// appended to that file (once per test process): how many endpoints a run covered.
import { appendFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EndpointMeta } from '../../shared/endpoint.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
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
  const log = process.env.RESPONSE_CHECK_LOG;
  if (log && !logged.has(name)) {
    logged.add(name);
    appendFileSync(log, `${name}\n`);
  }
}

/** Checks a parsed response body when it is a success envelope; error envelopes are left alone. */
export async function checkSuccessBody(target: string, httpStatus: number, body: unknown): Promise<void> {
  const envelope = body as { success?: unknown; data?: unknown } | null | undefined;
  if (httpStatus >= 200 && httpStatus < 300 && envelope && typeof envelope === 'object' && envelope.success === true) {
    await checkResponseData(target, envelope.data);
  }
}
