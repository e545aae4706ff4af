// A local HTTP fake of both KYC-side providers for the test suite (run under Deno by
// tests/support/stack.ts), in one process:
//   - Sumsub's API at the root: POST /resources/accessTokens/sdk, with Sumsub's request signing
//     checked the way Sumsub checks it (X-App-Token, X-App-Access-Ts within 60 s, X-App-Access-Sig =
//     hex HMAC-SHA256 of ts + method + path + raw body under the secret key) and Sumsub's error body
//     {description, code, correlationId, errorCode, errorName}.
//   - The identity contract of shared/kyc/identity-http.ts under /identity:
//     POST /identity/verifications with Authorization: Bearer <key>.
// It remembers what it was asked and, when a test says so, posts the providers' webhooks to the
// running server: Sumsub's signed with x-payload-digest, the identity results with
// x-identity-webhook-token. The signing here is written out on its own, not imported from shared/,
// so the fake checks our adapter rather than agreeing with it.
//
// Control API (tests only, under /_fake):
//   GET  /_fake/requests?path=/identity/verifications   requests received, oldest first
//   POST /_fake/fail {path, mode: 'refuse'|'unavailable'|'timeout', field?, value?}   make calls to
//        path fail (only those whose body field equals value, when given: parallel suites stay apart)
//   POST /_fake/clear-fail {path?, field?, value?}   drop the matching rules (every rule: no body)
//   POST /_fake/sumsub-final {userId, levelName, final?}   the applicant has (final: false, no longer
//        has) a FINAL rejection: the token call answers 409 / errorCode 1009
//   POST /_fake/sumsub-review {userId, levelName, answer: 'GREEN'|'RED', rejectLabels?,
//        reviewRejectType?, moderationComment?, clientComment?, type?, createdAtMs?, times?,
//        concurrent?, alg?, signature?}   an applicantReviewed webhook (RED defaults: RETRY,
//        ['UNSATISFACTORY_PHOTOS']; a RED FINAL also sets the FINAL rejection, a GREEN clears it)
//        -> {responses: [{status, body}], payload}
//   POST /_fake/sumsub-event {body, alg?, signature?, times?, concurrent?}   any Sumsub event (body: an
//        object, or a string sent byte for byte) -> {responses, payload}
//        alg: 'HMAC_SHA512_HEX' (default) | 'HMAC_SHA256_HEX' | 'HMAC_SHA1_HEX' | null (no
//        x-payload-digest-alg header, SHA-512); signature: sent instead of the right digest
//   POST /_fake/identity-result {reference, status?, verificationType?, names?, times?, concurrent?, token?}
//        the result of a check (status 'found' by default; the type the request asked for unless
//        given; token: sent instead of the right one; names: {firstName?, middleName?, lastName?}
//        returned for the number, or null for none; by default a NIN or BVN found returns the names
//        its request sent, in capitals, surname and first name swapped, as a registry writes them)
//        -> {responses, payload}
//   POST /_fake/identity-auto {enabled, status?}   answer every new /identity/verifications request
//        by posting its result 50 ms later (status 'found' by default)
// Times copies of a webhook are the same bytes, sent one after another, or all at once when concurrent.

const port = Number(Deno.env.get('FAKE_KYC_PORT') ?? 54334);
const appToken = Deno.env.get('FAKE_SUMSUB_APP_TOKEN') ?? '';
const secretKey = Deno.env.get('FAKE_SUMSUB_SECRET_KEY') ?? '';
const kycWebhookUrl = Deno.env.get('FAKE_KYC_WEBHOOK_URL') ?? 'http://127.0.0.1:54331/functions/v1/webhook-kyc';
const kycWebhookSecret = Deno.env.get('FAKE_KYC_WEBHOOK_SECRET') ?? '';
const identityApiKey = Deno.env.get('FAKE_IDENTITY_API_KEY') ?? '';
const identityWebhookUrl = Deno.env.get('FAKE_IDENTITY_WEBHOOK_URL') ??
  'http://127.0.0.1:54331/functions/v1/webhook-identity';
const identityWebhookToken = Deno.env.get('FAKE_IDENTITY_WEBHOOK_TOKEN') ?? '';

type Json = Record<string, unknown>;
type Alg = 'HMAC_SHA512_HEX' | 'HMAC_SHA256_HEX' | 'HMAC_SHA1_HEX';
type FailMode = 'refuse' | 'unavailable' | 'timeout';

interface Recorded {
  method: string;
  path: string;
  body: Json | null;
  at: string;
  /** Sumsub calls: the signing headers as received and what the fake made of them. */
  sumsub?: { appToken: string | null; ts: string | null; signature: string | null; signatureValid: boolean };
  /** Identity calls: whether the bearer key was right, and the number's last 4 digits. */
  identity?: { authorized: boolean; idLast4: string | null };
}
interface FailRule {
  path: string;
  mode: FailMode;
  field?: string;
  value?: string;
}

const VERIFICATION_TYPES = new Set(['NIN', 'BVN', 'CAC', 'TIN', 'BANK_ACCOUNT', 'DIRECTOR']);
const HASHES: Record<Alg, string> = { HMAC_SHA512_HEX: 'SHA-512', HMAC_SHA256_HEX: 'SHA-256', HMAC_SHA1_HEX: 'SHA-1' };

const requests: Recorded[] = [];
let fails: FailRule[] = [];
const finals = new Set<string>(); // `${userId}\n${levelName}` with a FINAL rejection
// reference -> the verification request (the whole number stays in memory only; never printed)
const verifications = new Map<
  string,
  { verificationType: string; idNumber: string; firstName?: string; lastName?: string }
>();
let auto: { status: string } | null = null;
let lastCreatedMs = 0;

const enc = new TextEncoder();
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
const finalKey = (userId: unknown, levelName: unknown) => `${userId}\n${levelName}`;

function toHex(buf: ArrayBuffer): string {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function hmac(hash: string, key: string, data: Uint8Array<ArrayBuffer>): Promise<string> {
  const k = await crypto.subtle.importKey('raw', enc.encode(key), { name: 'HMAC', hash }, false, ['sign']);
  return toHex(await crypto.subtle.sign('HMAC', k, data));
}

async function sha256Hex(s: string): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', enc.encode(s)));
}

/** Sumsub's error body. */
function sumsubError(status: number, description: string, errorCode?: number, errorName?: string): Response {
  return json(status, {
    description,
    code: status,
    correlationId: `req-${crypto.randomUUID()}`,
    ...(errorCode === undefined ? {} : { errorCode, errorName }),
  });
}

/** The injected failure for a call, if a rule matches it. */
function injected(path: string, body: Json | null): FailRule | undefined {
  return fails.find((f) =>
    f.path === path && (f.field === undefined || (body !== null && String(body[f.field]) === f.value))
  );
}

/** A 'timeout' rule: no answer for 20 s, longer than the adapters' 10 s default timeout. */
function hang(): Promise<Response> {
  return new Promise((resolve) =>
    setTimeout(() => resolve(json(504, { error: 'the fake held this request' })), 20_000)
  );
}

function parse(raw: Uint8Array): Json | null {
  try {
    const v = JSON.parse(new TextDecoder().decode(raw));
    return v && typeof v === 'object' && !Array.isArray(v) ? v as Json : null;
  } catch {
    return null;
  }
}

// --- Sumsub's API -------------------------------------------------------------------------------

async function sumsubApi(req: Request, url: URL): Promise<Response> {
  const raw = new Uint8Array(await req.arrayBuffer());
  const body = parse(raw);
  const token = req.headers.get('x-app-token');
  const ts = req.headers.get('x-app-access-ts');
  const signature = req.headers.get('x-app-access-sig');
  // Sumsub signs the path with its query string, exactly as sent
  const signedPath = url.pathname + url.search;
  let signatureValid = false;
  if (ts !== null && signature !== null) {
    const prefix = enc.encode(`${ts}${req.method.toUpperCase()}${signedPath}`);
    const data = new Uint8Array(prefix.length + raw.length);
    data.set(prefix, 0);
    data.set(raw, prefix.length);
    signatureValid = (await hmac('SHA-256', secretKey, data)) === signature;
  }
  requests.push({
    method: req.method,
    path: url.pathname,
    body,
    at: new Date().toISOString(),
    sumsub: { appToken: token, ts, signature, signatureValid },
  });

  if (token === null || ts === null || signature === null) {
    return sumsubError(401, 'Missing authentication headers', 4006, 'app-token-missing-headers');
  }
  if (!/^\d+$/.test(ts)) return sumsubError(401, 'Invalid X-App-Access-Ts header', 4005, 'app-token-invalid-value');
  if (token !== appToken) return sumsubError(401, 'App token not found', 4001, 'app-token-not-found');
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 60) {
    return sumsubError(401, 'Request expired', 4004, 'app-token-request-expired');
  }
  if (!signatureValid) return sumsubError(401, 'Invalid signature', 4003, 'app-token-signature-mismatch');

  if (req.method === 'POST' && url.pathname === '/resources/accessTokens/sdk') {
    if (!body || typeof body.userId !== 'string' || !body.userId || typeof body.levelName !== 'string') {
      return sumsubError(400, 'userId and levelName are required');
    }
    if (body.ttlInSecs !== undefined && (!Number.isInteger(body.ttlInSecs) || (body.ttlInSecs as number) <= 0)) {
      return sumsubError(400, 'ttlInSecs must be a positive whole number');
    }
    const rule = injected(url.pathname, body);
    if (rule?.mode === 'timeout') return hang();
    if (rule?.mode === 'unavailable') return sumsubError(500, 'Internal error (test rule)');
    if (rule?.mode === 'refuse') return sumsubError(400, 'Declined by test rule');
    if (finals.has(finalKey(body.userId, body.levelName))) {
      return sumsubError(409, 'Applicant has been finally rejected', 1009, 'applicant-with-final-reject');
    }
    return json(200, { token: `_act-sbx-${crypto.randomUUID()}`, userId: body.userId });
  }
  return sumsubError(404, `No route ${req.method} ${url.pathname}`);
}

// --- the identity contract ------------------------------------------------------------------------

async function identityApi(req: Request, url: URL): Promise<Response> {
  const body = parse(new Uint8Array(await req.arrayBuffer()));
  const authorized = req.headers.get('authorization') === `Bearer ${identityApiKey}`;
  const idNumber = typeof body?.idNumber === 'string' ? body.idNumber : null;
  requests.push({
    method: req.method,
    path: url.pathname,
    body,
    at: new Date().toISOString(),
    identity: { authorized, idLast4: idNumber ? idNumber.slice(-4) : null },
  });
  if (!authorized) return json(401, { message: 'Invalid API key' });
  if (req.method !== 'POST' || url.pathname !== '/identity/verifications') {
    return json(404, { message: `No route ${req.method} ${url.pathname}` });
  }
  const b = body ?? {};
  const problem = !body
    ? 'the body must be a JSON object'
    : typeof b.reference !== 'string' || !b.reference
    ? 'reference is required'
    : typeof b.verificationType !== 'string' || !VERIFICATION_TYPES.has(b.verificationType)
    ? 'verificationType must be one of NIN, BVN, CAC, TIN, BANK_ACCOUNT, DIRECTOR'
    : !idNumber
    ? 'idNumber is required'
    : b.verificationType === 'BANK_ACCOUNT' && (typeof b.bankCode !== 'string' || !b.bankCode)
    ? 'bankCode is required for BANK_ACCOUNT'
    : b.verificationType === 'DIRECTOR' && (typeof b.rcNumber !== 'string' || !b.rcNumber)
    ? 'rcNumber is required for DIRECTOR'
    : (b.verificationType === 'NIN' || b.verificationType === 'BVN') &&
        [b.firstName, b.lastName, b.phone].some((v) => typeof v !== 'string' || !v)
    ? 'firstName, lastName and phone are required for NIN and BVN'
    : null;
  if (problem) return json(400, { message: problem });
  const rule = injected(url.pathname, body);
  if (rule?.mode === 'timeout') return hang();
  if (rule?.mode === 'unavailable') return json(500, { error: 'Internal error (test rule)' });
  if (rule?.mode === 'refuse') return json(422, { message: 'Declined by test rule' });

  const reference = b.reference as string;
  verifications.set(reference, {
    verificationType: b.verificationType as string,
    idNumber: idNumber as string,
    ...(typeof b.firstName === 'string' && typeof b.lastName === 'string'
      ? { firstName: b.firstName, lastName: b.lastName }
      : {}),
  });
  if (auto) {
    const status = auto.status;
    setTimeout(() => {
      identityResult({ reference, status }).catch((err) =>
        console.error(`fake kyc: automatic result for ${reference} not delivered: ${err}`)
      );
    }, 50);
  }
  return json(202, { reference, status: 'pending' });
}

// --- webhooks to the server -----------------------------------------------------------------------

interface Sending {
  times?: number;
  concurrent?: boolean;
}

async function send(url: string, headers: Record<string, string>, body: string, opts: Sending) {
  const once = async () => {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch { /* not JSON: the text as it came */ }
    return { status: res.status, body: parsed };
  };
  const times = Math.max(1, Number(opts.times ?? 1));
  if (opts.concurrent) return await Promise.all(Array.from({ length: times }, once));
  const out = [];
  for (let i = 0; i < times; i++) out.push(await once());
  return out;
}

async function sumsubEvent(payload: unknown, opts: Sending & { alg?: Alg | null; signature?: string }) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const alg = opts.alg === undefined ? 'HMAC_SHA512_HEX' : opts.alg;
  if (alg !== null && !(alg in HASHES)) throw new Error(`unknown alg ${alg}`);
  const digest = opts.signature ??
    (await hmac(alg === null ? 'SHA-512' : HASHES[alg], kycWebhookSecret, enc.encode(body)));
  const headers: Record<string, string> = { 'x-payload-digest': digest };
  if (alg !== null) headers['x-payload-digest-alg'] = alg;
  return { responses: await send(kycWebhookUrl, headers, body, opts), payload };
}

/** Sumsub's createdAtMs ('YYYY-MM-DD HH:mm:ss.SSS', UTC); strictly increasing within the fake. */
function createdAtMs(): string {
  lastCreatedMs = Math.max(Date.now(), lastCreatedMs + 1);
  return new Date(lastCreatedMs).toISOString().replace('T', ' ').replace('Z', '');
}

async function sumsubReview(b: Json) {
  const userId = String(b.userId ?? '');
  const levelName = String(b.levelName ?? '');
  if (!userId || !levelName) throw new Error('userId and levelName are required');
  const answer = b.answer === 'RED' ? 'RED' : 'GREEN';
  const type = typeof b.type === 'string' ? b.type : 'applicantReviewed';
  const seed = await sha256Hex(finalKey(userId, levelName));
  const reviewResult: Json = { reviewAnswer: answer };
  if (answer === 'RED') {
    reviewResult.rejectLabels = Array.isArray(b.rejectLabels) ? b.rejectLabels : ['UNSATISFACTORY_PHOTOS'];
    reviewResult.reviewRejectType = typeof b.reviewRejectType === 'string' ? b.reviewRejectType : 'RETRY';
    if (b.moderationComment !== undefined) reviewResult.moderationComment = b.moderationComment;
    if (b.clientComment !== undefined) reviewResult.clientComment = b.clientComment;
  }
  const payload = {
    applicantId: seed.slice(0, 24),
    inspectionId: seed.slice(24, 48),
    applicantType: 'individual',
    correlationId: `req-${crypto.randomUUID()}`,
    externalUserId: userId,
    levelName,
    type,
    sandboxMode: true,
    reviewResult,
    reviewStatus: 'completed',
    createdAtMs: typeof b.createdAtMs === 'string' ? b.createdAtMs : createdAtMs(),
    clientId: 'escrow-test',
  };
  if (type === 'applicantReviewed') {
    if (answer === 'GREEN') finals.delete(finalKey(userId, levelName));
    else if (reviewResult.reviewRejectType === 'FINAL') finals.add(finalKey(userId, levelName));
  }
  return await sumsubEvent(payload, b as Sending & { alg?: Alg | null; signature?: string });
}

async function identityResult(b: Json) {
  const reference = String(b.reference ?? '');
  const known = verifications.get(reference);
  const verificationType = typeof b.verificationType === 'string' ? b.verificationType : known?.verificationType;
  if (!reference || !verificationType) {
    throw new Error('unknown reference: give its verificationType to send a result for it all the same');
  }
  const payload: Json = {
    reference,
    verificationType,
    status: typeof b.status === 'string' ? b.status : 'found',
    provider: 'fake',
    providerReference: crypto.randomUUID(),
    completedAt: new Date().toISOString(),
  };
  if (known) payload.idLast4 = known.idNumber.slice(-4);
  // the names found for the number: as given, or those the request sent, written as a registry does
  const names = b.names !== undefined
    ? b.names as Json | null
    : known?.firstName !== undefined && payload.status === 'found'
    ? { firstName: known.lastName?.toUpperCase(), lastName: known.firstName.toUpperCase() }
    : null;
  if (names) {
    for (const k of ['firstName', 'middleName', 'lastName']) if (typeof names[k] === 'string') payload[k] = names[k];
  }
  const token = typeof b.token === 'string' ? b.token : identityWebhookToken;
  return {
    responses: await send(identityWebhookUrl, { 'x-identity-webhook-token': token }, JSON.stringify(payload), b),
    payload,
  };
}

// --- control API --------------------------------------------------------------------------------

async function control(req: Request, url: URL): Promise<Response> {
  const path = url.pathname.slice('/_fake'.length);
  const b = req.method === 'POST' ? ((await req.json().catch(() => ({}))) as Json ?? {}) : {};
  try {
    if (req.method === 'GET' && path === '/requests') {
      const p = url.searchParams.get('path');
      return json(200, requests.filter((r) => !p || r.path === p));
    }
    if (req.method !== 'POST') return json(404, { error: `no control route ${req.method} ${path}` });
    switch (path) {
      case '/fail': {
        const mode = b.mode;
        if (typeof b.path !== 'string' || (mode !== 'refuse' && mode !== 'unavailable' && mode !== 'timeout')) {
          return json(400, { error: "path and mode ('refuse', 'unavailable' or 'timeout') are required" });
        }
        const rule: FailRule = { path: b.path, mode };
        if (typeof b.field === 'string') {
          rule.field = b.field;
          rule.value = String(b.value);
        }
        fails.push(rule);
        return json(200, { ok: true });
      }
      case '/clear-fail': {
        const before = fails.length;
        fails = fails.filter((f) =>
          !((b.path === undefined || f.path === b.path) &&
            (b.field === undefined || f.field === b.field) &&
            (b.value === undefined || f.value === String(b.value)))
        );
        return json(200, { ok: true, cleared: before - fails.length });
      }
      case '/sumsub-final': {
        if (typeof b.userId !== 'string' || typeof b.levelName !== 'string') {
          return json(400, { error: 'userId and levelName are required' });
        }
        if (b.final === false) finals.delete(finalKey(b.userId, b.levelName));
        else finals.add(finalKey(b.userId, b.levelName));
        return json(200, { ok: true });
      }
      case '/sumsub-review':
        return json(200, await sumsubReview(b));
      case '/sumsub-event':
        if (b.body === undefined) return json(400, { error: 'body is required' });
        return json(200, await sumsubEvent(b.body, b as Sending & { alg?: Alg | null; signature?: string }));
      case '/identity-result':
        return json(200, await identityResult(b));
      case '/identity-auto':
        auto = b.enabled ? { status: typeof b.status === 'string' ? b.status : 'found' } : null;
        return json(200, { ok: true });
    }
    return json(404, { error: `no control route ${path}` });
  } catch (err) {
    return json(400, { error: err instanceof Error ? err.message : String(err) });
  }
}

Deno.serve(
  { hostname: '127.0.0.1', port, onListen: () => console.log(`fake kyc listening on ${port}`) },
  (req) => {
    const url = new URL(req.url);
    if (url.pathname.startsWith('/_fake/')) return control(req, url);
    if (url.pathname === '/identity' || url.pathname.startsWith('/identity/')) return identityApi(req, url);
    return sumsubApi(req, url);
  },
);
