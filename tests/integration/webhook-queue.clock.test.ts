// The outbound webhook queue (shared/webhooks/queue.ts, supabase/migrations/20261127160000_webhook_queue.sql):
// escrow events of the log become deliveries to the endpoints of their recipients, sent signed to a
// receiver that checks every signature with the `standardwebhooks` package (the receiver example of
// docs/webhooks.md), tried again on the schedule, and never lost or sent under two webhook-ids.
//
// A clock suite: the job (runJobs) and the queue's own functions run at explicit times hours and
// days ahead, which would move other suites' rows. Subscriptions are rows written here in SQL (the
// endpoints that register them come next), each with its secret encrypted under the test stack's
// WEBHOOK_SECRET_KEY. Receivers listen on 127.0.0.1 only; where a destination is not loopback the
// resolver is a fake and fetch a stub that fails if it is ever asked to connect anywhere else.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { readBody } from '../support/receiver.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { testDb } from '../support/db.ts';
import { type Deal, escrowOp, fundWallet, payerCanFund } from '../support/escrows.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { type EscrowEvent, verifyEscrowWebhook } from '../docs-examples/webhook-receiver/verify.ts';
import { TEST_SECRETS } from '../../shared/core/published-secrets.ts';
import { ESCROW_STATUSES } from '../../shared/escrow/enums.ts';
import type { Resolver } from '../../shared/webhooks/address.ts';
import {
  deliverDue,
  type DeliverDueOptions,
  enableEndpoint,
  enqueueFromLog,
  kickWebhookDeliveries,
  messageIdOf,
  purgeDeliveries,
  retryDelivery,
} from '../../shared/webhooks/queue.ts';
import { MAX_ATTEMPTS } from '../../shared/webhooks/schedule.ts';
import { encryptSecret, generateSecret, importSecretKey } from '../../shared/webhooks/secrets.ts';
import { escrowWebhookType } from '../../shared/webhooks/types.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';

// ---- receivers ----------------------------------------------------------------------------------

type Received = { path: string; headers: Record<string, string>; body: string; at: number };
/** How a path answers: a status, or `slow` (200 after 11 s, past the 10 s deadline). */
type Mode = number | 'slow';

const received: Received[] = [];
const modes = new Map<string, Mode>();
/** Each answer waits this long (the concurrency test makes attempts overlap). */
let answerDelayMs = 0;

function receiver(): Server {
  return createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '/';
    received.push({ path, headers: req.headers as Record<string, string>, body, at: Date.now() });
    const mode = modes.get(path) ?? 200;
    if (mode === 'slow') {
      setTimeout(() => res.writeHead(200).end('late'), 11_000);
      return;
    }
    setTimeout(() => res.writeHead(mode, { 'content-type': 'text/plain' }).end(`answer ${mode}`), answerDelayMs);
  });
}

// one receiver that stays up, and one that goes down and comes back on the same port
let base: string;
let main: Server;
let flaky: Server | null = null;

/** Listens on 127.0.0.1 (a port the system gives when 0); resolves with the port. */
const listen = (s: Server, port: number) =>
  new Promise<number>((resolve) => s.listen(port, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
const close = (s: Server) =>
  new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });

// ---- subscriptions and time ---------------------------------------------------------------------

const H = 3_600_000;
const DAY = 24 * H;
const iso = (ms: number) => new Date(ms).toISOString();

type Endpoint = { id: string; secret: string; url: string; path: string };

/** An endpoint of `owner` at `url`, its secret encrypted as the service stores it. */
async function subscribe(
  owner: string,
  url: string,
  opts: { types?: string[]; previous?: string; previousUntil?: Date } = {},
): Promise<Endpoint> {
  const key = await importSecretKey(TEST_SECRETS.WEBHOOK_SECRET_KEY);
  const secret = generateSecret();
  const previous = opts.previous ? await encryptSecret(opts.previous, key) : null;
  const [row] = await testDb()<{ id: string }[]>`
    insert into private.webhook_endpoints (owner_id, url, event_types, secret_encrypted, previous_secret_encrypted,
                                           previous_secret_until)
    values (${owner}, ${url}, ${opts.types ?? null}, ${await encryptSecret(secret, key)}, ${previous},
            ${opts.previousUntil?.toISOString() ?? null})
    returning id`;
  return { id: row!.id, secret, url, path: new URL(url).pathname };
}

let pathCount = 0;
/** A fresh path on the main receiver, answering `mode`. */
function path(mode: Mode = 200): string {
  const p = `/hook-${++pathCount}`;
  modes.set(p, mode);
  return p;
}

type DeliveryRow = {
  id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_reason: string | null;
  response_excerpt: string | null;
  delivered_at: Date | null;
};

const deliveriesOf = (endpoint: Endpoint) =>
  testDb()<DeliveryRow[]>`
    select id, event_id::text, type, status, attempts, next_attempt_at, last_status_code, last_reason, response_excerpt,
           delivered_at
      from private.webhook_deliveries where endpoint_id = ${endpoint.id} order by event_id`;

const endpointRow = async (endpoint: Endpoint) =>
  (await testDb()<{ enabled: boolean; disabled_at: Date | null; failing_since: Date | null }[]>`
    select enabled, disabled_at, failing_since from private.webhook_endpoints where id = ${endpoint.id}`)[0]!;

const receivedAt = (endpoint: Endpoint) => received.filter((r) => r.path === endpoint.path);

/** The log read to its end (the suites before this one wrote many events). */
async function drain(now?: Date): Promise<void> {
  while ((await enqueueFromLog({ now, batch: 5000, maxBatches: 1 })).scanned > 0);
}

/** The queue's work at `now` in this process, as the job does it: the log read, then what is due. */
async function pump(now = new Date(), opts: DeliverDueOptions = {}) {
  await drain(now);
  return await deliverDue({ now, max: 1000, concurrency: 16, deadlineMs: 60_000, ...opts });
}

/** The events a receiver verified, in the order received. */
function verified(endpoint: Endpoint, secret = endpoint.secret): (EscrowEvent & { id: string })[] {
  return receivedAt(endpoint).map((r) => {
    const event = verifyEscrowWebhook(secret, r.body, r.headers);
    expect(event, `signature of ${r.body}`).not.toBeNull();
    return { ...(event as EscrowEvent), id: r.headers['webhook-id'] as string };
  });
}

// ---- escrows through the API ----------------------------------------------------------------------

/** An escrow `initiator` creates (they pay), with a new counterparty. */
async function dealOf(initiator: TestUser): Promise<Deal> {
  const counterparty = await signUp({ first_name: 'Cou' });
  const res = await post(escrowCreate, {
    category: 'goods_products',
    payer_role: 'initiator',
    title: 'Webhook laptop',
    counterparty_phone: counterparty.phone,
    amount: 10_000,
  }, { token: initiator.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return {
    initiator,
    counterparty,
    payer: initiator,
    payee: counterparty,
    escrowId: res.body.data.escrow_id,
    conversationId: res.body.data.conversation_id,
    inviteToken: res.body.data.invite_token,
    feeBreakdown: res.body.data.fee_breakdown,
  };
}

/** Funded from the payer's wallet and accepted: status funded. */
async function fund(deal: Deal): Promise<void> {
  await payerCanFund(deal);
  await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
  expect((await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' })).status).toBe(200);
  expect((await escrowOp('escrow-accept', deal.counterparty, deal.escrowId)).status).toBe(200);
}

/** An escrow's creation event for its owner, written in SQL: no request, so no server attempts it. */
const writeCreatedEvent = (owner: TestUser, escrowId: string) =>
  testDb()`select private.event_write('escrow', ${escrowId}::uuid, ${escrowId}::uuid, array[${owner.id}::uuid],
                                      '{"status": "draft", "previous_status": null}'::jsonb)`;

const escrowAs = async (user: TestUser, escrowId: string) => {
  const r = await get(escrowGet, { token: user.accessToken, query: { escrow_id: escrowId } });
  expect(r.status).toBe(200);
  return r.body.data;
};

// ---------------------------------------------------------------------------------------------------

beforeAll(async () => {
  main = receiver();
  base = `http://127.0.0.1:${await listen(main, 0)}`;
  await drain();
});

afterAll(async () => {
  // the suites after this one run the job too: nothing of ours is left for them to send
  await testDb()`update private.webhook_endpoints set enabled = false, disabled_at = now() where enabled`;
  await close(main);
  if (flaky) await close(flaky);
});

describe('event types', () => {
  it('the database names every escrow change as shared/webhooks/types.ts does, and only escrow events', async () => {
    const pairs = ESCROW_STATUSES.flatMap((status) =>
      [null, ...ESCROW_STATUSES].flatMap((previous) =>
        [false, true].map((delivered) => ({ status, previous, delivered }))
      )
    );
    const rows = await testDb()<{ type: string | null }[]>`
      select private.webhook_event_type('escrow', pg_catalog.jsonb_build_object('status', p.status, 'previous_status',
                                        p.previous, 'delivered', p.delivered)) as type
        from pg_catalog.jsonb_array_elements((${JSON.stringify(pairs)}::text)::jsonb) with ordinality as x(pair, n)
        cross join lateral (select x.pair ->> 'status' as status, x.pair ->> 'previous' as previous,
                                   (x.pair ->> 'delivered')::boolean as delivered) p
       order by x.n`;
    expect(rows.map((r) => r.type)).toEqual(pairs.map((p) => escrowWebhookType(p.status, p.previous, p.delivered)));
    for (const kind of ['message', 'notification', 'wallet']) {
      const [r] = await testDb()<{ type: string | null }[]>`
        select private.webhook_event_type(${kind}, '{"status":"funded","previous_status":"active"}'::jsonb) as type`;
      expect(r!.type, kind).toBeNull();
    }
  });
});

describe('jobs-run', () => {
  it('sends escrow.created, escrow.funded and escrow.delivered, signed, with the escrow as escrow-get answers the owner', async () => {
    const owner = await signUp({ first_name: 'Merchant' });
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    const deal = await dealOf(owner);
    expect((await runJobs(iso(Date.now()))).status).toBe(200);
    const created = await escrowAs(owner, deal.escrowId);
    await fund(deal);
    expect((await runJobs(iso(Date.now()))).status).toBe(200);
    const funded = await escrowAs(owner, deal.escrowId);
    expect(funded.status).toBe('funded');
    const delivering = await escrowOp('escrow-deliver', deal.counterparty, deal.escrowId);
    expect(delivering.status, JSON.stringify(delivering.body)).toBe(200);
    expect((await runJobs(iso(Date.now()))).status).toBe(200);
    const delivered = await escrowAs(owner, deal.escrowId);

    const events = verified(endpoint);
    // no message, notification or wallet event; the counterparty's linking is no type of its own
    expect(events.map((e) => e.type)).toEqual(['escrow.created', 'escrow.funded', 'escrow.delivered']);
    expect(events[0]!.data).toEqual(created);
    expect(events[1]!.data).toEqual(funded);
    expect(events[2]!.data).toEqual(delivered);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    const rows = await deliveriesOf(endpoint);
    expect(rows.map((r) => [r.status, r.attempts, r.last_status_code])).toEqual([
      ['succeeded', 1, 200],
      ['succeeded', 1, 200],
      ['succeeded', 1, 200],
    ]);
    expect(rows.map((r) => messageIdOf(r.id)).sort()).toEqual(events.map((e) => e.id).sort());
    // the counterparty has no endpoint: nothing is sent anywhere for them
    expect(received.filter((r) => r.body.includes(deal.counterparty.id) && r.path !== endpoint.path)).toEqual([]);
  });

  it(
    'a receiver failing with 500s, then too slow, then down for hours gets the event until it answers 2xx, under one webhook-id',
    async () => {
      const owner = await signUp({ first_name: 'Flaky' });
      flaky = receiver();
      const port = await listen(flaky, 0);
      const endpoint = await subscribe(owner.id, `http://127.0.0.1:${port}/flaky`);
      modes.set('/flaky', 500);
      await dealOf(owner);

      const t0 = Date.now();
      const state = async () => (await deliveriesOf(endpoint))[0]!;
      const runAt = async (ms: number) => expect((await runJobs(iso(ms))).status).toBe(200);
      const due = async () => ((await state()).next_attempt_at as Date).getTime();

      await runAt(t0);
      expect(await state()).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500 });
      expect((await state()).last_reason).toBe('server_error');
      // retried after 5 s (±20%): not before
      const second = await due();
      expect(second - t0).toBeGreaterThanOrEqual(4_000);
      expect(second - t0).toBeLessThanOrEqual(6_000);
      await runAt(second - 500);
      expect(receivedAt(endpoint)).toHaveLength(1);
      await runAt(second);
      expect(await state()).toMatchObject({ attempts: 2, last_status_code: 500 });

      // too slow: the 10 s deadline
      modes.set('/flaky', 'slow');
      await runAt(await due());
      expect(await state()).toMatchObject({ status: 'pending', attempts: 3, last_reason: 'timeout' });

      // down for hours
      await close(flaky);
      flaky = null;
      for (let attempt = 4; attempt <= 6; attempt++) {
        await runAt(await due());
        expect(await state()).toMatchObject({ status: 'pending', attempts: attempt, last_reason: 'network_error' });
      }
      const upAt = await due();
      // six delays: 5 s + 5 min + 30 min + 2 h + 5 h + 10 h, each 20% shorter at most
      expect(upAt - t0).toBeGreaterThan(14 * H);

      // back, and answering
      flaky = receiver();
      await listen(flaky, port);
      modes.set('/flaky', 204);
      await runAt(upAt);
      expect(await state()).toMatchObject({
        status: 'succeeded',
        attempts: 7,
        last_status_code: 204,
        next_attempt_at: null,
      });
      await runAt(upAt + 3 * DAY);

      // every attempt that reached it: 500, 500, slow, 204; one webhook-id, each signed
      const got = verified(endpoint);
      expect(got.map((e) => e.type)).toEqual(['escrow.created', 'escrow.created', 'escrow.created', 'escrow.created']);
      expect(new Set(got.map((e) => e.id))).toEqual(new Set([messageIdOf((await state()).id)]));
    },
    90_000,
  );
});

describe('the queue', () => {
  it('enqueueing an event again inserts nothing', async () => {
    const owner = await signUp();
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    await dealOf(owner);
    await drain();
    const [first] = await deliveriesOf(endpoint);
    const [event] = await testDb()<{ xact: string; id: string }[]>`
      select xact::text, id::text from private.events where id = ${first!.event_id}`;
    // the cursor put back just before the event: it is read again
    await testDb()`update private.webhook_feed set xact = ${event!.xact}::xid8, event_id = ${Number(event!.id) - 1}`;
    const again = await enqueueFromLog({ batch: 5000, maxBatches: 1 });
    expect(again.scanned).toBeGreaterThanOrEqual(1);
    expect(await deliveriesOf(endpoint)).toEqual([first]);
  });

  it('an event whose transaction commits late is sent once it has committed, never passed over', async () => {
    const owner = await signUp();
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    const first = await dealOf(owner);
    await pump();
    expect(verified(endpoint).map((e) => e.type)).toEqual(['escrow.created']);

    // a transaction of its own writes an escrow event (cancelled) and stays open while a later one
    // (an escrow created through the API) commits
    const held = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    let commit!: () => void;
    const gate = new Promise<void>((resolve) => (commit = resolve));
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => (written = resolve));
    const open = held.begin(async (tx) => {
      await tx`update public.escrows set status = 'cancelled', cancelled_at = now() where id = ${first.escrowId}`;
      written();
      await gate;
    });
    try {
      await wrote;
      await dealOf(owner);
      await pump();
      // neither is sent yet: the later one waits below the open transaction's horizon
      expect(verified(endpoint).map((e) => e.type)).toEqual(['escrow.created']);
      commit();
      await open;
    } finally {
      commit();
      await held.end();
    }
    await pump();
    const types = verified(endpoint).map((e) => e.type);
    expect(types.slice(1).sort()).toEqual(['escrow.cancelled', 'escrow.created']);
    expect(new Set(verified(endpoint).map((e) => e.id)).size).toBe(3);
  });

  it('kickWebhookDeliveries: calls during a run share it and the run after it, and what they committed is sent', async () => {
    const owner = await signUp();
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    await dealOf(owner);
    const first = kickWebhookDeliveries();
    const during = [kickWebhookDeliveries(), kickWebhookDeliveries(), kickWebhookDeliveries()];
    expect(during.every((p) => p === first)).toBe(true);
    await Promise.all([first, ...during]);
    expect(verified(endpoint).map((e) => e.type)).toEqual(['escrow.created']);
    // a call after the run has ended starts a new one
    const next = kickWebhookDeliveries();
    expect(next).not.toBe(first);
    await next;
    expect(receivedAt(endpoint)).toHaveLength(1);
  });

  it('8 callers at once enqueue and deliver each event once', async () => {
    const owner = await signUp();
    // the deals first, then the endpoint, then their events written again in SQL: a write request
    // would have the server attempt them at once (shared/webhooks/on-write.ts), and here only the
    // eight callers may
    const deals = [];
    for (let i = 0; i < 6; i++) deals.push(await dealOf(owner));
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    for (const deal of deals) await writeCreatedEvent(owner, deal.escrowId);
    answerDelayMs = 150;
    try {
      const now = new Date();
      await Promise.all(Array.from({ length: 8 }, async () => {
        await enqueueFromLog({ now, batch: 2, maxBatches: 1000 });
        await deliverDue({ now, max: 100, concurrency: 2, deadlineMs: 30_000 });
      }));
    } finally {
      answerDelayMs = 0;
    }
    const rows = await deliveriesOf(endpoint);
    expect(rows).toHaveLength(6);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual(rows.map(() => ['succeeded', 1]));
    const ids = receivedAt(endpoint).map((r) => r.headers['webhook-id']);
    expect(ids.sort()).toEqual(rows.map((r) => messageIdOf(r.id)).sort());
  });

  it(
    'an endpoint failing for more than 5 days is disabled, gets nothing, and gets its pending deliveries once enabled',
    async () => {
      const owner = await signUp();
      const hook = path(500);
      const endpoint = await subscribe(owner.id, `${base}${hook}`);
      await dealOf(owner);
      const t0 = Date.now();
      await pump(new Date(t0));
      expect((await endpointRow(endpoint)).failing_since?.getTime()).toBe(t0);
      const [delivery] = await deliveriesOf(endpoint);

      // 4 days on: still failing, still enabled
      expect(await retryDelivery(delivery!.id, new Date(t0 + 4 * DAY))).toBe(true);
      await pump(new Date(t0 + 4 * DAY));
      expect(await endpointRow(endpoint)).toMatchObject({ enabled: true, disabled_at: null });
      // past 5 days: disabled
      const t5 = t0 + 5 * DAY + 60_000;
      await retryDelivery(delivery!.id, new Date(t5));
      await pump(new Date(t5));
      expect(await endpointRow(endpoint)).toMatchObject({ enabled: false, disabled_at: new Date(t5) });
      const attemptsWhenDisabled = receivedAt(endpoint).length;
      expect(attemptsWhenDisabled).toBe(3);

      // disabled: its pending delivery is not tried, and new events are not queued for it
      await dealOf(owner);
      await pump(new Date(t5 + 3 * DAY));
      expect(receivedAt(endpoint)).toHaveLength(attemptsWhenDisabled);
      expect(await deliveriesOf(endpoint)).toHaveLength(1);

      // enabled again: the pending delivery is due at once, and succeeds
      modes.set(hook, 200);
      const enabledAt = t5 + 2_000; // before the pending delivery's own next attempt (5 s after t5, -20% at most)
      expect(await enableEndpoint(endpoint.id, new Date(enabledAt))).toBe(1);
      expect(await endpointRow(endpoint)).toMatchObject({ enabled: true, disabled_at: null, failing_since: null });
      expect((await deliveriesOf(endpoint))[0]!.next_attempt_at).toEqual(new Date(enabledAt));
      await pump(new Date(enabledAt));
      expect((await deliveriesOf(endpoint))[0]).toMatchObject({ status: 'succeeded' });
      expect(receivedAt(endpoint)).toHaveLength(attemptsWhenDisabled + 1);
      expect(await enableEndpoint('00000000-0000-4000-8000-000000000000')).toBeNull();
    },
    60_000,
  );

  it(`a delivery fails after ${MAX_ATTEMPTS} attempts; a manual retry sends it again under the same webhook-id`, async () => {
    const owner = await signUp();
    const hook = path(503);
    const endpoint = await subscribe(owner.id, `${base}${hook}`);
    await dealOf(owner);
    let now = Date.now();
    await pump(new Date(now));
    for (let i = 1; i < MAX_ATTEMPTS; i++) {
      now = ((await deliveriesOf(endpoint))[0]!.next_attempt_at as Date).getTime();
      await pump(new Date(now));
    }
    const [failed] = await deliveriesOf(endpoint);
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
      next_attempt_at: null,
      last_status_code: 503,
    });
    expect(receivedAt(endpoint)).toHaveLength(MAX_ATTEMPTS);
    await pump(new Date(now + 10 * DAY));
    expect(receivedAt(endpoint)).toHaveLength(MAX_ATTEMPTS);

    modes.set(hook, 200);
    expect(await retryDelivery(failed!.id, new Date(now + 10 * DAY))).toBe(true);
    await pump(new Date(now + 10 * DAY));
    expect((await deliveriesOf(endpoint))[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
    const ids = new Set(receivedAt(endpoint).map((r) => r.headers['webhook-id']));
    expect(ids).toEqual(new Set([messageIdOf(failed!.id)]));
    // a delivery that succeeded is not retried
    expect(await retryDelivery(failed!.id)).toBe(false);
  });

  it('an escrow the owner can no longer read is not sent: the delivery fails as gone', async () => {
    const owner = await signUp();
    const deal = await dealOf(owner);
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    // nothing in the API takes an escrow away from its party yet: moved to another initiator here,
    // after its event is written in SQL (a write request would have the server send it at once)
    await writeCreatedEvent(owner, deal.escrowId);
    const other = await signUp();
    await testDb()`update public.escrows set initiator_id = ${other.id} where id = ${deal.escrowId}`;
    await pump();
    expect((await deliveriesOf(endpoint))[0]).toMatchObject({ status: 'failed', last_reason: 'gone', attempts: 1 });
    expect(receivedAt(endpoint)).toEqual([]);
    expect((await endpointRow(endpoint)).failing_since).toBeNull();
  });

  it('during the 24 h after a rotation a delivery carries both signatures; after them only the new one', async () => {
    const owner = await signUp();
    const old = generateSecret();
    const t0 = Date.now();
    const endpoint = await subscribe(owner.id, `${base}${path()}`, {
      previous: old,
      previousUntil: new Date(t0 + H), // rotated 23 hours ago
    });
    await dealOf(owner);
    await pump(new Date(t0));
    const [during] = receivedAt(endpoint);
    expect(during!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyEscrowWebhook(endpoint.secret, during!.body, during!.headers)).not.toBeNull();
    expect(verifyEscrowWebhook(old, during!.body, during!.headers)).not.toBeNull();

    await dealOf(owner);
    await pump(new Date(t0 + 2 * H));
    const after = receivedAt(endpoint)[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifyEscrowWebhook(endpoint.secret, after.body, after.headers)).not.toBeNull();
    expect(verifyEscrowWebhook(old, after.body, after.headers)).toBeNull();
  });

  it('an endpoint whose host resolves to a private address is refused at delivery, without a connection', async () => {
    const owner = await signUp();
    const endpoint = await subscribe(owner.id, 'https://hooks.merchant.example/escrow');
    const resolved: string[] = [];
    const resolver: Resolver = async (host) => {
      resolved.push(host);
      return host === 'hooks.merchant.example' ? ['93.184.215.14', '10.20.30.40'] : [];
    };
    const tried: string[] = [];
    // loopback goes through (other endpoints' deliveries may be due); anything else is a bug here
    const stub = (url: URL, init: RequestInit) => {
      if (url.hostname !== '127.0.0.1') {
        tried.push(url.href);
        return Promise.reject(new Error(`the test tried to connect to ${url.href}`));
      }
      return fetch(url, init);
    };
    await dealOf(owner);
    await pump(new Date(), { resolver, fetch: stub });
    expect(resolved).toContain('hooks.merchant.example');
    expect(tried).toEqual([]);
    expect((await deliveriesOf(endpoint))[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_reason: 'address_refused',
      last_status_code: null,
    });
    expect((await endpointRow(endpoint)).failing_since).not.toBeNull();
  });

  it('deliveries are removed 30 days after they were made, by the job', async () => {
    const owner = await signUp();
    const endpoint = await subscribe(owner.id, `${base}${path()}`);
    await dealOf(owner);
    await pump();
    expect(await deliveriesOf(endpoint)).toHaveLength(1);
    expect(await purgeDeliveries(new Date(Date.now() + 29 * DAY))).toBe(0);
    expect(await deliveriesOf(endpoint)).toHaveLength(1);
    const run = await runJobs(iso(Date.now() + 31 * DAY));
    expect(run.status).toBe(200);
    expect(run.body.data.webhooks_purged).toBeGreaterThanOrEqual(1);
    expect(await deliveriesOf(endpoint)).toEqual([]);
  });
});
