// One delivery attempt (shared/webhooks/deliver.ts) against a real receiver on 127.0.0.1, which
// checks every signature with the `standardwebhooks` package through the receiver example of
// docs/webhooks.md. The local-stack mode is what lets a loopback receiver in at all; the refused
// destinations are checked outside it with a fake resolver, and fetch is watched to prove that no
// connection was even attempted. Nothing here connects anywhere but 127.0.0.1.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../support/receiver.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Resolver } from '../../shared/webhooks/address.ts';
import { deliver, type DeliveryOptions, EXCERPT_MAX_BYTES } from '../../shared/webhooks/deliver.ts';
import { generateSecret } from '../../shared/webhooks/secrets.ts';
import { newMessageId, signingSecrets } from '../../shared/webhooks/sign.ts';
import { type EscrowEvent, verifyEscrowWebhook } from '../docs-examples/webhook-receiver/verify.ts';

type Received = { path: string; headers: Record<string, string>; body: string };

const secret = generateSecret();
const received: Received[] = [];
let server: Server;
let base: string;
let hugeWritten = 0;
let hugeClosed: Promise<void> = Promise.resolve();

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '/';
    received.push({ path, headers: req.headers as Record<string, string>, body });
    switch (path) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
        return;
      case '/fail':
        res.writeHead(500).end('boom');
        return;
      case '/gone':
        res.writeHead(410).end('no such hook');
        return;
      case '/slow':
        setTimeout(() => res.writeHead(200).end('late'), 1_500);
        return;
      case '/redirect':
        res.writeHead(302, { location: `${base}/target` }).end();
        return;
      case '/target':
        res.writeHead(200).end('followed');
        return;
      case '/huge': {
        // an endless body: a client that read it all would never finish
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(64 * 1024);
        let done!: () => void;
        hugeClosed = new Promise((r) => (done = r));
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) hugeWritten += chunk.length;
          if (res.destroyed) done();
        };
        res.on('drain', pump);
        res.on('close', () => done());
        pump();
        return;
      }
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  received.length = 0;
  vi.restoreAllMocks();
});

const noDns: Resolver = () => Promise.reject(new Error('no name should be resolved here'));
const local: DeliveryOptions = { resolver: noDns, local: true };
const event = { type: 'escrow.funded', data: { escrow_id: 'e_1', amount: 150_000 }, occurredAt: new Date() };
const attempt = (path: string, opts: DeliveryOptions = local, secrets = [secret]) =>
  deliver({ url: `${base}${path}`, id: newMessageId(), event, secrets }, opts);

describe('webhook delivery (one attempt)', () => {
  it('a 2xx is a success, signed so the receiver verifies it with the package', async () => {
    const r = await attempt('/ok');
    expect(r).toMatchObject({ ok: true, status: 200, excerpt: 'thanks' });
    expect(r.reason).toBeUndefined();
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
    expect(received).toHaveLength(1);
    const got = received[0] as Received;
    expect(got.headers['content-type']).toBe('application/json');
    const verified = verifyEscrowWebhook(secret, got.body, got.headers) as EscrowEvent;
    expect(verified).toEqual({ type: 'escrow.funded', timestamp: event.occurredAt.toISOString(), data: event.data });
    expect(verifyEscrowWebhook(generateSecret(), got.body, got.headers)).toBeNull();
  });

  it('during a rotation the receiver verifies with the old secret and with the new', async () => {
    const previous = generateSecret();
    const secrets = signingSecrets(
      { current: secret, previous, rotatedAt: new Date(Date.now() - 3_600_000) },
      new Date(),
    );
    expect((await attempt('/ok', local, secrets)).ok).toBe(true);
    const got = received[0] as Received;
    expect(got.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifyEscrowWebhook(secret, got.body, got.headers)).not.toBeNull();
    expect(verifyEscrowWebhook(previous, got.body, got.headers)).not.toBeNull();
  });

  it('a 500 or a 410 is a failure, with the excerpt of the answer', async () => {
    expect(await attempt('/fail')).toMatchObject({ ok: false, status: 500, reason: 'server_error', excerpt: 'boom' });
    expect(await attempt('/gone')).toMatchObject({ ok: false, status: 410, reason: 'client_error' });
  });

  it('a receiver slower than the deadline is a timeout', async () => {
    const r = await attempt('/slow', { ...local, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, reason: 'timeout', excerpt: '' });
    expect(r.status).toBeUndefined();
    expect(r.duration_ms).toBeGreaterThanOrEqual(290);
    expect(r.duration_ms).toBeLessThan(1_400);
  });

  it('a 302 is a failure and is not followed', async () => {
    const r = await attempt('/redirect');
    expect(r).toMatchObject({ ok: false, status: 302, reason: 'redirect' });
    expect(received.map((x) => x.path)).toEqual(['/redirect']);
  });

  it('reads at most 4 KiB of an endless body, well before the deadline', async () => {
    const r = await attempt('/huge', { ...local, timeoutMs: 5_000 });
    expect(r).toMatchObject({ ok: true, status: 200 });
    expect(r.excerpt).toBe('x'.repeat(EXCERPT_MAX_BYTES));
    expect(r.duration_ms).toBeLessThan(2_000);
    await hugeClosed; // we hung up: the receiver's endless write stopped
    expect(hugeWritten).toBeLessThan(64 * 1024 * 1024);
  });

  it('an unreachable receiver is a network error', async () => {
    // a port nothing listens on: one the system gave out and that was closed again
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const r = await deliver({ url: `http://127.0.0.1:${port}/`, id: newMessageId(), event, secrets: [secret] }, local);
    expect(r).toMatchObject({ ok: false, reason: 'network_error', detail: 'ECONNREFUSED' });
  });

  it("an error that is not a network failure is thrown, not recorded as the receiver's failure", async () => {
    vi.spyOn(globalThis, 'fetch').mockRejectedValue(new RangeError('a bug of ours'));
    await expect(attempt('/ok')).rejects.toThrow('a bug of ours');
  });

  describe('refused destinations (outside the local stack)', () => {
    const fake: Record<string, string[]> = {
      'private.hooks.example': ['10.0.0.1'],
      'metadata.hooks.example': ['169.254.169.254'],
      'mapped.hooks.example': ['::ffff:127.0.0.1'],
      'half.hooks.example': ['93.184.215.14', '192.168.1.20'],
    };
    const resolver: Resolver = async (host) => fake[host] ?? [];
    const deployed: DeliveryOptions = { resolver, local: false };
    // fetch is replaced, not only watched: even with a rule broken, no test connects to these addresses
    const blockFetch = () =>
      vi.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('a refused destination reached fetch'));

    it.each([
      ['https://private.hooks.example/hook', 'address_refused', '10.0.0.1 (private)'],
      ['https://metadata.hooks.example/hook', 'address_refused', '169.254.169.254 (metadata)'],
      ['https://mapped.hooks.example/hook', 'address_refused', '::ffff:127.0.0.1 (loopback)'],
      ['https://half.hooks.example/hook', 'address_refused', '192.168.1.20 (private)'],
      ['https://nowhere.hooks.example/hook', 'dns_failed', 'no address'],
      ['https://2130706433/hook', 'address_refused', '127.0.0.1 (loopback)'],
      ['https://[::ffff:a9fe:a9fe]/hook', 'address_refused', '::ffff:a9fe:a9fe (metadata)'],
    ])('%s is refused (%s) without any connection attempt', async (url, reason, detail) => {
      const spy = blockFetch();
      const r = await deliver({ url, id: newMessageId(), event, secrets: [secret] }, deployed);
      expect(r).toMatchObject({ ok: false, reason, detail, excerpt: '' });
      expect(spy).not.toHaveBeenCalled();
    });

    it('http is refused outside the local stack, even to a public address', async () => {
      const spy = blockFetch();
      const r = await deliver(
        { url: 'http://93.184.215.14/hook', id: newMessageId(), event, secrets: [secret] },
        deployed,
      );
      expect(r).toMatchObject({ ok: false, reason: 'scheme_not_allowed' });
      expect(spy).not.toHaveBeenCalled();
    });

    it('the local receiver itself is refused outside the local stack', async () => {
      const spy = blockFetch();
      const r = await attempt('/ok', deployed);
      expect(r).toMatchObject({ ok: false, reason: 'scheme_not_allowed' });
      const https = await deliver(
        { url: base.replace('http:', 'https:') + '/ok', id: newMessageId(), event, secrets: [secret] },
        deployed,
      );
      expect(https).toMatchObject({ ok: false, reason: 'address_refused', detail: '127.0.0.1 (loopback)' });
      expect(spy).not.toHaveBeenCalled();
      expect(received).toEqual([]);
    });
  });
});
