// A merchant's webhook endpoints and their deliveries (docs/merchants.md#webhook-endpoints), through
// the real server: merchant-webhook-create, -list, -delete, -rotate-secret and -enable with the
// owner's session; webhook-delivery-list and webhook-delivery-retry with a merchant key. Another
// merchant's endpoint or delivery is 404 on every one of them.
//
// A clock suite: deliveries are sent by the job (runJobs), which the test stack leaves to it
// (WEBHOOK_SEND_AFTER_WRITES=false), and the job acts on every row. Until merchant escrows exist,
// the events that name a merchant as a recipient are written here in SQL (private.event_write),
// for escrows made through the API. The receiver listens on 127.0.0.1 (loopback is allowed on the
// local stack) and verifies every signature with the receiver example of docs/webhooks.md.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult, expectError, expectOk, get, post } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { testDb } from '../support/db.ts';
import { newMerchant, newMerchantEscrow } from '../support/merchants.ts';
import { readBody } from '../support/receiver.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { verifyEscrowWebhook } from '../docs-examples/webhook-receiver/verify.ts';
import { TEST_SECRETS } from '../../shared/core/published-secrets.ts';
import { MAX_WEBHOOK_ENDPOINTS } from '../../shared/merchants/webhook-schema.ts';
import { decryptSecret, importSecretKey } from '../../shared/webhooks/secrets.ts';
import type { WebhookEventType } from '../../shared/webhooks/types.ts';
import merchantKeyRevoke from '../../supabase/functions/merchant-key-revoke/handler.ts';
import webhookCreate from '../../supabase/functions/merchant-webhook-create/handler.ts';
import webhookList from '../../supabase/functions/merchant-webhook-list/handler.ts';
import webhookDelete from '../../supabase/functions/merchant-webhook-delete/handler.ts';
import webhookRotate from '../../supabase/functions/merchant-webhook-rotate-secret/handler.ts';
import webhookEnable from '../../supabase/functions/merchant-webhook-enable/handler.ts';
import deliveryList from '../../supabase/functions/webhook-delivery-list/handler.ts';
import deliveryRetry from '../../supabase/functions/webhook-delivery-retry/handler.ts';

// ---- the receiver ------------------------------------------------------------------------------

type Received = { path: string; headers: Record<string, string>; body: string };
const received: Received[] = [];
/** The status each path answers (200 unless set). */
const modes = new Map<string, number>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '/';
    received.push({ path, headers: req.headers as Record<string, string>, body });
    const status = modes.get(path) ?? 200;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  );
  base = `http://127.0.0.1:${port}`;
  // the log the suites before this one wrote is read before any endpoint of ours exists
  expect((await runJobs(new Date().toISOString())).status).toBe(200);
});

afterAll(async () => {
  // the clock suites after this one run the job too: nothing of ours is left for them to send
  await testDb()`update private.webhook_endpoints set enabled = false, disabled_at = now()
                  where enabled and owner_kind = 'merchant'`;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let pathCount = 0;
/** A fresh URL on the receiver, whose path answers `status`. */
function hook(status = 200): string {
  const p = `/merchant-hook-${++pathCount}`;
  modes.set(p, status);
  return `${base}${p}`;
}
const receivedAt = (url: string) => received.filter((r) => r.path === new URL(url).pathname);

// ---- merchants, keys, endpoints, events ----------------------------------------------------------

type Owner = TestUser & { merchantId: string; key: string; keyId: string; escrows: string[] };

let merchantCount = 0;
/** A tier-4 user with a merchant and one API key (tests/support/merchants.ts), and three escrows. */
async function owner(): Promise<Owner> {
  const m = await newMerchant(`Hook Traders ${'abcdefghij'[merchantCount++ % 10]}`);
  // its escrows, made before any endpoint exists (an endpoint is sent only what happens after it)
  const escrows: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { escrow } = await newMerchantEscrow(m, { reference: `hooks-${i}`, title: 'Hooked phone', amount: 5_000 });
    escrows.push(escrow.id);
  }
  return { ...m.owner, merchantId: m.id, key: m.key, keyId: m.keyId, escrows };
}

async function endpointOf(o: Owner, url = hook(), event_types?: WebhookEventType[]) {
  return expectOk(
    await post(webhookCreate, event_types ? { url, event_types } : { url }, { token: o.accessToken }),
    201,
  );
}

/** One of the merchant's escrows, to be named in events (each taken once). */
const escrowId = (o: Owner): Promise<string> => {
  const id = o.escrows.shift();
  if (!id) throw new Error('the owner has no escrow left: make more in owner()');
  return Promise.resolve(id);
};

/** An escrow event whose recipients are `recipients` (a merchant's id here), as merchant escrows will write it. */
async function writeEvent(
  escrow: string,
  recipients: string[],
  data: Record<string, unknown> = { status: 'draft', previous_status: null },
  kind = 'escrow',
): Promise<void> {
  await testDb()`select private.event_write(${kind}, ${escrow}::uuid, ${escrow}::uuid, ${recipients}::uuid[],
                                            (${JSON.stringify(data)}::text)::jsonb)`;
}

const jobs = async (at = new Date()) => expect((await runJobs(at.toISOString())).status).toBe(200);

const deliveriesOf = (endpointId: string) =>
  testDb()<{ id: string; status: string; attempts: number; next_attempt_at: Date | null }[]>`
    select id, status, attempts, next_attempt_at from private.webhook_deliveries
     where endpoint_id = ${endpointId} order by created_at, id`;

/** Fills the key's rate limit for this minute, as 600 requests would (MERCHANT_KEY_MAX_PER_MINUTE). */
const exhaustKey = (keyId: string) =>
  testDb()`insert into private.rate_limit_events (key, created_at)
           select ${`merchant-key:${keyId}`}, now() from generate_series(1, 600)`;

const expect404 = (res: ApiResult, code: string, field: string) => expect(expectError(res, 404, code)).toEqual([field]);

// ---- merchant-webhook-create -------------------------------------------------------------------

describe('merchant-webhook-create', () => {
  it('answers the secret once and keeps it only encrypted; a repeat with the same Idempotency-Key makes another', async () => {
    const o = await owner();
    const url = hook();
    const opts = { token: o.accessToken, headers: { 'Idempotency-Key': randomUUID() } };
    const made = expectOk(await post(webhookCreate, { url }, opts), 201);
    expect(made).toMatchObject({ url, event_types: null, enabled: true, disabled_at: null, failing_since: null });
    expect(made.secret).toMatch(/^whsec_/);
    const [row] = await testDb()<Record<string, unknown>[]>`
      select * from private.webhook_endpoints where id = ${made.id}`;
    expect(row).toMatchObject({ owner_id: o.merchantId, owner_kind: 'merchant', url });
    expect(JSON.stringify(row)).not.toContain(made.secret.slice('whsec_'.length));
    const key = await importSecretKey(TEST_SECRETS.WEBHOOK_SECRET_KEY);
    expect(await decryptSecret(String(row!.secret_encrypted), key)).toBe(made.secret);
    // never kept for a replay: the same key makes another endpoint with another secret
    const again = await post(webhookCreate, { url }, opts);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const second = expectOk(again, 201);
    expect(second.id).not.toBe(made.id);
    expect(second.secret).not.toBe(made.secret);
    const [kept] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.idempotency_keys where response_body like ${`%${made.secret}%`}`;
    expect(kept?.n).toBe(0);
  });

  it('keeps the event types asked for (each once); an unknown type is a 400', async () => {
    const o = await owner();
    const made = await endpointOf(o, hook(), ['escrow.funded', 'escrow.released', 'escrow.funded']);
    expect(made.event_types).toEqual(['escrow.funded', 'escrow.released']);
    // @ts-expect-error a type that does not exist
    const bad = await post(webhookCreate, { url: hook(), event_types: ['wallet.credited'] }, {
      token: o.accessToken,
    });
    expect(expectError(bad, 400, 'validation_failed')[0]).toMatch(/^event_types/);
  });

  it.each([
    ['a user and password', 'https://user:secret@hooks.example.com/in'],
    ['a private address', 'http://10.0.0.7/in'],
    ['the metadata address', 'http://169.254.169.254/latest'],
    ['another scheme', 'ftp://hooks.example.com/in'],
    ['no URL at all', 'hooks.example.com/in'],
  ])('refuses %s (400 on url), registering nothing', async (_what, url) => {
    const o = await owner();
    expect(expectError(await post(webhookCreate, { url }, { token: o.accessToken }), 400, 'validation_failed'))
      .toEqual(['url']);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_endpoints where owner_id = ${o.merchantId}`;
    expect(n?.n).toBe(0);
  });

  it(`allows ${MAX_WEBHOOK_ENDPOINTS} endpoints, then 409 webhook_endpoint_limit, even when creations race`, async () => {
    const o = await owner();
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS - 2; i++) await endpointOf(o);
    const racing = await Promise.all(
      [1, 2, 3, 4].map(() => post(webhookCreate, { url: hook() }, { token: o.accessToken })),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 409, 409]);
    const over = racing.find((r) => r.status === 409)!;
    expectError(over, 409, 'webhook_endpoint_limit');
    expect(over.body.error).toContain(`at most ${MAX_WEBHOOK_ENDPOINTS}`);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_endpoints where owner_id = ${o.merchantId}`;
    expect(n?.n).toBe(MAX_WEBHOOK_ENDPOINTS);
  });

  it('is 403 merchant_frozen for a frozen merchant: its owner cannot open a new way out for its data', async () => {
    const o = await owner();
    const e = await endpointOf(o);
    await testDb()`update private.merchants set status = 'frozen' where id = ${o.merchantId}`;
    expectError(await post(webhookCreate, { url: hook() }, { token: o.accessToken }), 403, 'merchant_frozen');
    expectError(await post(webhookEnable, { endpoint_id: e.id }, { token: o.accessToken }), 403, 'merchant_frozen');
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_endpoints where owner_id = ${o.merchantId}`;
    expect(n?.n).toBe(1);
    // what only stops deliveries stays open: the endpoint can still be removed
    expectOk(await post(webhookDelete, { endpoint_id: e.id }, { token: o.accessToken }));
  });

  it('is 404 merchant_not_found without a merchant, and 401 with a key instead of the session', async () => {
    const user = await signUp({ tier: 4 });
    expectError(await post(webhookCreate, { url: hook() }, { token: user.accessToken }), 404, 'merchant_not_found');
    const o = await owner();
    expectError(await post(webhookCreate, { url: hook() }, { token: o.key }), 401, 'unauthenticated');
  });
});

// ---- merchant-webhook-list ---------------------------------------------------------------------

describe('merchant-webhook-list', () => {
  it("lists the merchant's own endpoints, oldest first, never a secret", async () => {
    const a = await owner();
    const b = await owner();
    const first = await endpointOf(a, hook(), ['escrow.funded']);
    const second = await endpointOf(a);
    await endpointOf(b);
    const list = expectOk(await get(webhookList, { token: a.accessToken }));
    expect(list.map((e) => e.id)).toEqual([first.id, second.id]);
    expect(list[0]).toEqual({
      id: first.id,
      url: first.url,
      event_types: ['escrow.funded'],
      enabled: true,
      disabled_at: null,
      failing_since: null,
      created_at: first.created_at,
      secret_rotated_until: null,
    });
    const text = JSON.stringify(list);
    for (const e of [first, second]) expect(text).not.toContain(e.secret.slice('whsec_'.length));
  });

  it('is 404 merchant_not_found for a user without a merchant', async () => {
    const user = await signUp({ tier: 4 });
    expectError(await get(webhookList, { token: user.accessToken }), 404, 'merchant_not_found');
  });
});

// ---- merchant-webhook-delete -------------------------------------------------------------------

describe('merchant-webhook-delete', () => {
  it('removes the endpoint: its pending deliveries are never sent', async () => {
    const o = await owner();
    const url = hook(500);
    const e = await endpointOf(o, url);
    await writeEvent(await escrowId(o), [o.merchantId]);
    await jobs();
    expect(receivedAt(url)).toHaveLength(1);
    expect((await deliveriesOf(e.id)).map((d) => d.status)).toEqual(['pending']);
    modes.set(new URL(url).pathname, 200);

    const gone = expectOk(await post(webhookDelete, { endpoint_id: e.id }, { token: o.accessToken }));
    expect(gone).toEqual({ endpoint_id: e.id, deliveries_stopped: 1 });
    await jobs(new Date(Date.now() + 3_600_000));
    expect(receivedAt(url)).toHaveLength(1);
    expect(await deliveriesOf(e.id)).toEqual([]);
    expect(expectOk(await get(webhookList, { token: o.accessToken }))).toEqual([]);
    expect404(
      await post(webhookDelete, { endpoint_id: e.id }, { token: o.accessToken }),
      'webhook_endpoint_not_found',
      'endpoint_id',
    );
  });

  it("cannot remove another merchant's endpoint (404), which keeps working", async () => {
    const a = await owner();
    const b = await owner();
    const bUrl = hook();
    const bEndpoint = await endpointOf(b, bUrl);
    expect404(
      await post(webhookDelete, { endpoint_id: bEndpoint.id }, { token: a.accessToken }),
      'webhook_endpoint_not_found',
      'endpoint_id',
    );
    await writeEvent(await escrowId(b), [b.merchantId]);
    await jobs();
    expect(receivedAt(bUrl)).toHaveLength(1);
    const stranger = await signUp({ tier: 4 });
    expectError(
      await post(webhookDelete, { endpoint_id: bEndpoint.id }, { token: stranger.accessToken }),
      404,
      'merchant_not_found',
    );
  });
});

// ---- merchant-webhook-rotate-secret ------------------------------------------------------------

describe('merchant-webhook-rotate-secret', () => {
  it('signs with the new secret and the old one for 24 hours, then the new one only', async () => {
    const o = await owner();
    const url = hook();
    const e = await endpointOf(o, url);
    const rotatedAt = Date.now();
    const rotated = expectOk(await post(webhookRotate, { endpoint_id: e.id }, { token: o.accessToken }));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(e.secret);
    expect(Date.parse(rotated.previous_secret_until) - rotatedAt).toBeGreaterThan(24 * 3_600_000 - 60_000);
    const [listed] = expectOk(await get(webhookList, { token: o.accessToken }));
    expect(listed?.secret_rotated_until).toBe(rotated.previous_secret_until);

    await writeEvent(await escrowId(o), [o.merchantId]);
    await jobs();
    const [during] = receivedAt(url);
    expect(during!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyEscrowWebhook(rotated.secret, during!.body, during!.headers)).not.toBeNull();
    expect(verifyEscrowWebhook(e.secret, during!.body, during!.headers)).not.toBeNull();

    // a day later only the new secret signs
    await writeEvent(await escrowId(o), [o.merchantId]);
    await jobs(new Date(rotatedAt + 25 * 3_600_000));
    const after = receivedAt(url)[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
  });

  it("cannot rotate another merchant's endpoint (404): its secret stays", async () => {
    const a = await owner();
    const b = await owner();
    const bEndpoint = await endpointOf(b);
    const before = await testDb()`select secret_encrypted from private.webhook_endpoints where id = ${bEndpoint.id}`;
    expect404(
      await post(webhookRotate, { endpoint_id: bEndpoint.id }, { token: a.accessToken }),
      'webhook_endpoint_not_found',
      'endpoint_id',
    );
    expect(await testDb()`select secret_encrypted from private.webhook_endpoints where id = ${bEndpoint.id}`)
      .toEqual(before);
    const stranger = await signUp({ tier: 4 });
    expectError(
      await post(webhookRotate, { endpoint_id: bEndpoint.id }, { token: stranger.accessToken }),
      404,
      'merchant_not_found',
    );
  });
});

// ---- merchant-webhook-enable -------------------------------------------------------------------

describe('merchant-webhook-enable', () => {
  it('turns a disabled endpoint back on; its pending deliveries are due at once', async () => {
    const o = await owner();
    const url = hook(500);
    const e = await endpointOf(o, url);
    await writeEvent(await escrowId(o), [o.merchantId]);
    await jobs();
    expect(receivedAt(url)).toHaveLength(1);
    // disabled after failing for days, as the queue does it
    await testDb()`update private.webhook_endpoints set enabled = false, disabled_at = now(),
                     failing_since = now() - interval '6 days' where id = ${e.id}`;
    modes.set(new URL(url).pathname, 200);
    const [listed] = expectOk(await get(webhookList, { token: o.accessToken }));
    expect(listed).toMatchObject({ enabled: false });
    expect(listed?.disabled_at).not.toBeNull();

    const enabled = expectOk(await post(webhookEnable, { endpoint_id: e.id }, { token: o.accessToken }));
    expect(enabled).toEqual({ endpoint_id: e.id, deliveries_due: 1 });
    const [d] = await deliveriesOf(e.id);
    expect(d!.next_attempt_at!.getTime()).toBeLessThanOrEqual(Date.now());
    expect(expectOk(await get(webhookList, { token: o.accessToken }))[0]).toMatchObject({
      enabled: true,
      disabled_at: null,
      failing_since: null,
    });
    await jobs();
    expect(receivedAt(url)).toHaveLength(2);
    expect((await deliveriesOf(e.id)).map((x) => x.status)).toEqual(['succeeded']);
  });

  it("cannot enable another merchant's endpoint (404): it stays disabled", async () => {
    const a = await owner();
    const b = await owner();
    const bEndpoint = await endpointOf(b);
    await testDb()`update private.webhook_endpoints set enabled = false, disabled_at = now() where id = ${bEndpoint.id}`;
    expect404(
      await post(webhookEnable, { endpoint_id: bEndpoint.id }, { token: a.accessToken }),
      'webhook_endpoint_not_found',
      'endpoint_id',
    );
    const [row] = await testDb()<{ enabled: boolean }[]>`
      select enabled from private.webhook_endpoints where id = ${bEndpoint.id}`;
    expect(row?.enabled).toBe(false);
    const stranger = await signUp({ tier: 4 });
    expectError(
      await post(webhookEnable, { endpoint_id: bEndpoint.id }, { token: stranger.accessToken }),
      404,
      'merchant_not_found',
    );
  });
});

// ---- the job: what reaches a merchant's endpoints --------------------------------------------------

describe('jobs-run', () => {
  it("sends a merchant's endpoint only escrow events naming the merchant, of its types, signed, with the escrow", async () => {
    const o = await owner();
    const other = await owner();
    const all = hook();
    const fundedOnly = hook();
    const eAll = await endpointOf(o, all);
    await endpointOf(o, fundedOnly, ['escrow.funded']);
    const escrow = await escrowId(o);
    await writeEvent(escrow, [o.merchantId]);
    await writeEvent(escrow, [o.merchantId], { status: 'funded', previous_status: 'draft' });
    // not the merchant's: another merchant's event, a user's, and a message naming the merchant
    await writeEvent(escrow, [other.merchantId]);
    await writeEvent(escrow, [o.id]);
    await writeEvent(escrow, [o.merchantId], { status: 'funded', previous_status: 'draft' }, 'message');
    await jobs();

    // sent in one run, at once: in either order
    const events = receivedAt(all).map((r) => verifyEscrowWebhook(eAll.secret, r.body, r.headers)!)
      .sort((x, y) => x.type.localeCompare(y.type));
    expect(events.map((e) => e.type)).toEqual(['escrow.created', 'escrow.funded']);
    // the escrow as merchant-escrow-get answers the merchant when the delivery is sent
    const read = await get('merchant-escrow-get', { token: o.key, query: { escrow_id: escrow } });
    expect(read.status).toBe(200);
    expect(events[0]?.data).toEqual(read.body.data);
    expect(events[1]?.data).toEqual(read.body.data);
    expect(receivedAt(fundedOnly).map((r) => JSON.parse(r.body).type)).toEqual(['escrow.funded']);
  });
});

// ---- webhook-delivery-list ----------------------------------------------------------------------

describe('webhook-delivery-list', () => {
  it("lists the merchant's deliveries newest first, by endpoint and status, page by page", async () => {
    const o = await owner();
    const other = await owner();
    const okUrl = hook();
    const failing = hook(503);
    const eOk = await endpointOf(o, okUrl);
    const eFail = await endpointOf(o, failing);
    await endpointOf(other);
    for (let i = 0; i < 3; i++) await writeEvent(await escrowId(o), [o.merchantId]);
    await writeEvent(await escrowId(other), [other.merchantId]);
    await jobs();

    const all = expectOk(await get(deliveryList, { token: o.key, query: { limit: 100 } }));
    expect(all).toHaveLength(6);
    expect(new Set(all.map((d) => d.endpoint_id))).toEqual(new Set([eOk.id, eFail.id]));
    const order = all.map((d) => [d.created_at, d.id].join(' '));
    expect(order).toEqual([...order].sort().reverse());
    const failed = all.find((d) => d.endpoint_id === eFail.id)!;
    expect(failed).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 503,
      last_reason: 'server_error',
      response_excerpt: 'answer 503',
      message_id: `msg_${failed.id.replaceAll('-', '')}`,
      type: 'escrow.created',
    });
    expect(failed.next_attempt_at).not.toBeNull();
    const sent = all.find((d) => d.endpoint_id === eOk.id)!;
    expect(sent).toMatchObject({ status: 'succeeded', last_status_code: 200, next_attempt_at: null });
    expect(sent.delivered_at).not.toBeNull();
    expect(receivedAt(okUrl).map((r) => r.headers['webhook-id']).sort())
      .toEqual(all.filter((d) => d.endpoint_id === eOk.id).map((d) => d.message_id).sort());

    const byEndpoint = expectOk(await get(deliveryList, { token: o.key, query: { endpoint_id: eFail.id } }));
    expect(byEndpoint.map((d) => d.endpoint_id)).toEqual([eFail.id, eFail.id, eFail.id]);
    const succeeded = expectOk(await get(deliveryList, { token: o.key, query: { status: 'succeeded' } }));
    expect(succeeded.map((d) => d.endpoint_id)).toEqual([eOk.id, eOk.id, eOk.id]);

    // pages of 4: every delivery once, in the same order (they share their creation time)
    const page1 = expectOk(await get(deliveryList, { token: o.key, query: { limit: 4 } }));
    const page2 = expectOk(
      await get(deliveryList, { token: o.key, query: { limit: 4, before: page1[page1.length - 1]!.id } }),
    );
    expect([...page1, ...page2].map((d) => d.id)).toEqual(all.map((d) => d.id));
  });

  it("is 404 for another merchant's endpoint or delivery named in the query, and lists none of theirs", async () => {
    const a = await owner();
    const b = await owner();
    const bEndpoint = await endpointOf(b);
    await writeEvent(await escrowId(b), [b.merchantId]);
    await jobs();
    const [bDelivery] = await deliveriesOf(bEndpoint.id);
    expect404(
      await get(deliveryList, { token: a.key, query: { endpoint_id: bEndpoint.id } }),
      'webhook_endpoint_not_found',
      'endpoint_id',
    );
    expect404(
      await get(deliveryList, { token: a.key, query: { before: bDelivery!.id } }),
      'webhook_delivery_not_found',
      'before',
    );
    expect(expectOk(await get(deliveryList, { token: a.key }))).toEqual([]);
    expect(expectOk(await get(deliveryList, { token: b.key })).map((d) => d.id)).toEqual([bDelivery!.id]);
  });

  it("refuses a revoked key and the owner's session (401), and a key over its limit (429)", async () => {
    const o = await owner();
    expectError(await get(deliveryList, { token: o.accessToken }), 401, 'unauthenticated');
    await exhaustKey(o.keyId);
    const limited = await get(deliveryList, { token: o.key });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectOk(await post(merchantKeyRevoke, { key_id: o.keyId }, { token: o.accessToken }));
    expectError(await get(deliveryList, { token: o.key }), 401, 'unauthenticated');
  });
});

// ---- webhook-delivery-retry ---------------------------------------------------------------------

describe('webhook-delivery-retry', () => {
  it('sends a failed delivery again at once, with a new series of attempts and the same webhook-id', async () => {
    const o = await owner();
    const url = hook(500);
    const e = await endpointOf(o, url);
    await writeEvent(await escrowId(o), [o.merchantId]);
    await jobs();
    const [d] = await deliveriesOf(e.id);
    // its attempts ran out
    await testDb()`update private.webhook_deliveries set status = 'failed', next_attempt_at = null, attempts = 11
                    where id = ${d!.id}`;
    modes.set(new URL(url).pathname, 200);

    const retried = expectOk(await post(deliveryRetry, { delivery_id: d!.id }, { token: o.key }));
    expect(retried.delivery_id).toBe(d!.id);
    expect(retried.status).toBe('pending');
    expect(Date.parse(retried.next_attempt_at!)).toBeLessThanOrEqual(Date.now());
    expect((await deliveriesOf(e.id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    await jobs();
    const [first, second] = receivedAt(url);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect((await deliveriesOf(e.id))[0]).toMatchObject({ status: 'succeeded', attempts: 1 });

    // a succeeded delivery is not sent again
    const again = await post(deliveryRetry, { delivery_id: d!.id }, { token: o.key });
    expectError(again, 409, 'webhook_delivery_succeeded');
    expect(receivedAt(url)).toHaveLength(2);
  });

  it("is 404 for another merchant's delivery, which is left as it was", async () => {
    const a = await owner();
    const b = await owner();
    const bEndpoint = await endpointOf(b, hook(500));
    await writeEvent(await escrowId(b), [b.merchantId]);
    await jobs();
    const [before] = await deliveriesOf(bEndpoint.id);
    expect404(
      await post(deliveryRetry, { delivery_id: before!.id }, { token: a.key }),
      'webhook_delivery_not_found',
      'delivery_id',
    );
    expect((await deliveriesOf(bEndpoint.id))[0]).toEqual(before);
  });

  it("refuses a revoked key and the owner's session (401), and a key over its limit (429)", async () => {
    const o = await owner();
    const id = randomUUID();
    expectError(await post(deliveryRetry, { delivery_id: id }, { token: o.accessToken }), 401, 'unauthenticated');
    await exhaustKey(o.keyId);
    expectError(await post(deliveryRetry, { delivery_id: id }, { token: o.key }), 429, 'rate_limited');
    expectOk(await post(merchantKeyRevoke, { key_id: o.keyId }, { token: o.accessToken }));
    expectError(await post(deliveryRetry, { delivery_id: id }, { token: o.key }), 401, 'unauthenticated');
  });
});
