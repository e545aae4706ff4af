// npm run smoke -- <functions_base_url> [--origin=<origin>]
//
// Checks a deployment from outside, as a client sees it (README.md, "The smoke check"): the OpenAPI
// document is served; a CORS preflight from an allowed origin is answered (the origin from --origin
// or SMOKE_ORIGIN; skipped with a note when neither is given); every answer carries the security
// headers the functions set; the authenticated reads answer 401 without a token; the three provider
// webhooks refuse a wrong signature with 401; and, given SMOKE_TOKEN (a test user's access token),
// the reads answer 200. It only reads: no request it sends writes a row or moves money (a webhook
// with a wrong signature is refused before its body is looked at).
//
// One line per check as it runs (ok, FAIL or skip), then a summary. Exits 0 when every check
// passed, 1 listing every failed check, 2 when called wrongly.
import { ALWAYS_HEADERS } from '../shared/core/http.ts';
import type { Handler } from '../shared/core/endpoint.ts';
import openapi from '../supabase/functions/openapi/handler.ts';
import profileGet from '../supabase/functions/profile-get/handler.ts';
import walletGet from '../supabase/functions/wallet-get/handler.ts';
import escrowList from '../supabase/functions/escrow-list/handler.ts';
import notificationList from '../supabase/functions/notification-list/handler.ts';
import kycStatus from '../supabase/functions/kyc-status/handler.ts';
import transactionList from '../supabase/functions/transaction-list/handler.ts';
import conversationList from '../supabase/functions/conversation-list/handler.ts';
import webhookPayments from '../supabase/functions/webhook-payments/handler.ts';
import webhookKyc from '../supabase/functions/webhook-kyc/handler.ts';
import webhookIdentity from '../supabase/functions/webhook-identity/handler.ts';

/** Reads of the caller's own data: GET, bearer token, no required query, nothing written. */
const READS: Handler[] = [
  profileGet,
  walletGet,
  escrowList,
  notificationList,
  kycStatus,
  transactionList,
  conversationList,
];
const WEBHOOKS: Handler[] = [webhookPayments, webhookKyc, webhookIdentity];
/** The value sent as every webhook's signature: never a valid one. */
const WRONG_SIGNATURE = 'smoke-check-not-a-signature';
const TIMEOUT_MS = 20_000;

function usage(message: string): never {
  console.error(`smoke: ${message}`);
  console.error('usage: npm run smoke -- <functions_base_url> [--origin=<origin>]');
  console.error('  e.g. npm run smoke -- https://<project-ref>.supabase.co/functions/v1');
  console.error(
    "  SMOKE_ORIGIN: an origin CORS_ALLOW_ORIGIN lists (or --origin); SMOKE_TOKEN: a test user's access token",
  );
  Deno.exit(2);
}

const args = [...Deno.args];
const originArg = args.find((a) => a.startsWith('--origin='));
const positional = args.filter((a) => !a.startsWith('--'));
const unknown = args.filter((a) => a.startsWith('--') && !a.startsWith('--origin='));
if (unknown.length > 0) usage(`unknown option ${unknown.join(' ')}`);
if (positional.length !== 1) usage("give the functions' base URL, and only it");
let base: URL;
try {
  base = new URL((positional[0] as string).replace(/\/+$/, ''));
} catch {
  usage(`not a URL: ${positional[0]}`);
}
if (base.protocol !== 'https:' && base.protocol !== 'http:') usage(`not an http(s) URL: ${base.href}`);
const baseText = base.href.replace(/\/+$/, '');
const origin = (originArg?.slice('--origin='.length) ?? Deno.env.get('SMOKE_ORIGIN') ?? '').trim();
const token = (Deno.env.get('SMOKE_TOKEN') ?? '').trim();

interface Answer {
  what: string;
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** Every answer received, for the headers check at the end. */
const answers: Answer[] = [];

async function request(
  what: string,
  name: string,
  init: { method: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const res = await fetch(`${baseText}/${name}`, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const answer = { what, status: res.status, headers: res.headers, text, json };
  answers.push(answer);
  return answer;
}

/** The answer in a few words for a failure line: status and code, never a body's data. */
function said(a: Answer): string {
  const code = (a.json as { code?: unknown } | undefined)?.code;
  return `${a.status}${typeof code === 'string' ? ` ${code}` : ''}`;
}

const failures: string[] = [];
let passed = 0;
let skipped = 0;

/** Runs one check: it returns a note on success and throws (or returns a failure) when it fails. */
async function check(name: string, run: () => Promise<string | { fail: string }>): Promise<void> {
  let outcome: string | { fail: string };
  try {
    outcome = await run();
  } catch (err) {
    outcome = { fail: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  if (typeof outcome === 'string') {
    passed++;
    console.log(`ok    ${name}${outcome ? ` (${outcome})` : ''}`);
  } else {
    failures.push(`${name}: ${outcome.fail}`);
    console.log(`FAIL  ${name}: ${outcome.fail}`);
  }
}

function skip(name: string, why: string): void {
  skipped++;
  console.log(`skip  ${name}: ${why}`);
}

console.log(`smoke: checking ${baseText}`);

await check('the OpenAPI document is served', async () => {
  const a = await request('openapi', openapi.meta.name, { method: 'GET' });
  if (a.status !== 200) return { fail: `expected 200, got ${said(a)}` };
  const doc = a.json as { openapi?: unknown; paths?: Record<string, unknown> } | undefined;
  if (typeof doc?.openapi !== 'string' || !doc.openapi.startsWith('3.1')) {
    return { fail: 'the answer is not an OpenAPI 3.1 document' };
  }
  const missing = [...READS, ...WEBHOOKS].map((h) => `/${h.meta.name}`).filter((p) => !doc.paths?.[p]);
  if (missing.length > 0) return { fail: `the document has no ${missing.join(', ')}` };
  return `${openapi.meta.name}: OpenAPI ${doc.openapi}, ${Object.keys(doc.paths ?? {}).length} operations`;
});

const preflight = `CORS preflight from an allowed origin (${profileGet.meta.name})`;
if (origin === '') {
  skip(preflight, 'no origin given; set SMOKE_ORIGIN (or --origin=) to an origin CORS_ALLOW_ORIGIN lists');
} else {
  await check(preflight, async () => {
    const a = await request('CORS preflight', profileGet.meta.name, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': profileGet.meta.method,
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    if (a.status < 200 || a.status > 299) return { fail: `expected 204, got ${said(a)}` };
    const allowed = a.headers.get('access-control-allow-origin');
    if (allowed !== origin && allowed !== '*') {
      return {
        fail: allowed === null
          ? `no Access-Control-Allow-Origin for ${origin}: CORS_ALLOW_ORIGIN does not list it`
          : `Access-Control-Allow-Origin is ${allowed}, not ${origin}`,
      };
    }
    const methods = (a.headers.get('access-control-allow-methods') ?? '').toUpperCase();
    if (!methods.includes(profileGet.meta.method)) {
      return { fail: `Access-Control-Allow-Methods lacks ${profileGet.meta.method}` };
    }
    const headers = (a.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    if (!headers.includes('authorization')) return { fail: 'Access-Control-Allow-Headers lacks authorization' };
    return `${a.status}, Access-Control-Allow-Origin: ${allowed}${
      allowed === '*' ? ' (any origin: set CORS_ALLOW_ORIGIN)' : ''
    }`;
  });
}

for (const read of READS) {
  await check(`${read.meta.name} without a token answers 401`, async () => {
    const a = await request(`${read.meta.name} without a token`, read.meta.name, { method: read.meta.method });
    const code = (a.json as { code?: unknown } | undefined)?.code;
    if (a.status !== 401 || code !== 'unauthenticated') return { fail: `expected 401 unauthenticated, got ${said(a)}` };
    return '';
  });
}

for (const hook of WEBHOOKS) {
  const names = hook.meta.signedBy?.headers.map((h) => h.name) ?? [];
  await check(`${hook.meta.name} refuses a wrong signature with 401`, async () => {
    if (names.length === 0) return { fail: 'the endpoint names no signature header' };
    const a = await request(`${hook.meta.name} with a wrong signature`, hook.meta.name, {
      method: hook.meta.method,
      headers: { 'Content-Type': 'application/json', ...Object.fromEntries(names.map((n) => [n, WRONG_SIGNATURE])) },
      body: '{"smoke":"a check of the signature only; not an event"}',
    });
    const code = (a.json as { code?: unknown } | undefined)?.code;
    if (a.status !== 401 || code !== 'invalid_signature') {
      return { fail: `expected 401 invalid_signature, got ${said(a)}` };
    }
    return names.join(', ');
  });
}

if (token === '') {
  for (const read of READS) skip(`${read.meta.name} with SMOKE_TOKEN answers 200`, 'SMOKE_TOKEN is not set');
} else {
  for (const read of READS) {
    await check(`${read.meta.name} with SMOKE_TOKEN answers 200`, async () => {
      const a = await request(`${read.meta.name} with a token`, read.meta.name, {
        method: read.meta.method,
        headers: { Authorization: `Bearer ${token}` },
      });
      const body = a.json as { success?: unknown; status?: unknown } | undefined;
      if (a.status !== 200 || body?.success !== true || body.status !== 200) {
        return { fail: `expected 200 with the success envelope, got ${said(a)}` };
      }
      return '';
    });
  }
}

// The functions' own headers, on every answer above: what a browser must never second-guess.
await check(`every answer carries the security headers (${answers.length} answers)`, () => {
  if (answers.length === 0) return Promise.resolve({ fail: 'no answer was received' });
  const lacking = answers.flatMap((a) => {
    const wrong = Object.entries(ALWAYS_HEADERS)
      .filter(([name, value]) => a.headers.get(name)?.toLowerCase() !== value.toLowerCase())
      .map(([name, value]) => `${name}: ${value}`);
    if (a.headers.get('x-request-id') === null) wrong.push('x-request-id');
    if (a.status !== 204 && !(a.headers.get('content-type') ?? '').startsWith('application/json')) {
      wrong.push('Content-Type: application/json');
    }
    return wrong.length > 0 ? [`${a.what} lacks ${wrong.join(', ')}`] : [];
  });
  const checked = [
    ...Object.entries(ALWAYS_HEADERS).map(([n, v]) => `${n}: ${v}`),
    'x-request-id',
    'a JSON Content-Type',
  ];
  return Promise.resolve(lacking.length > 0 ? { fail: lacking.join('; ') } : checked.join(', '));
});

const total = passed + failures.length;
if (failures.length > 0) {
  console.log(`\nsmoke: ${failures.length} of ${total} checks failed${skipped ? ` (${skipped} skipped)` : ''}:`);
  for (const f of failures) console.log(`  - ${f}`);
  Deno.exit(1);
}
console.log(`\nsmoke: all ${total} checks passed${skipped ? ` (${skipped} skipped: see above)` : ''}`);
