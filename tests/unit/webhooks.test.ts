// The outbound webhook primitives of shared/webhooks (docs/webhooks.md), each rule on its own: the
// addresses a delivery refuses, the retry schedule, secrets at rest, and signatures checked by the
// `standardwebhooks` package itself (as a receiver would check them).
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { checkDestination, classifyAddress, parseDestination, type Resolver } from '../../shared/webhooks/address.ts';
import { JITTER, MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from '../../shared/webhooks/schedule.ts';
import {
  decryptSecret,
  encryptSecret,
  generateSecret,
  importSecretKey,
  isWebhookSecret,
  webhookSecretKey,
} from '../../shared/webhooks/secrets.ts';
import {
  newMessageId,
  ROTATION_OVERLAP_MS,
  signatureHeader,
  signingSecrets,
  webhookBody,
  webhookHeaders,
} from '../../shared/webhooks/sign.ts';
import { toBase64 } from '../../shared/core/crypto.ts';
import { webhookUrlProblem } from '../../shared/merchants/webhook-schema.ts';

const H = 3_600_000;

describe('webhook destinations (shared/webhooks/address.ts)', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.0.1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'shared_cgnat'],
    ['100.127.255.255', 'shared_cgnat'],
    ['0.0.0.0', 'this_network'],
    ['0.1.2.3', 'this_network'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::8.8.8.8', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['fec0::1', 'reserved'],
  ];
  it.each(refused)('refuses %s (%s)', (address, category) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, category });
  });

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '41.58.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ];
  it.each(allowed)('allows the public address %s', (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it('is not fooled by text that is not an address', () => {
    for (
      const text of ['hooks.example.com', '1.2.3', '1.2.3.4.5', '256.0.0.1', '::1::2', '1:2:3:4:5:6:7:8:9', 'g::1']
    ) {
      expect(classifyAddress(text), text).toBeNull();
    }
  });

  describe('the URL', () => {
    const refusedUrl = (url: string, local = false) => parseDestination(url, { local });

    it('is https, http only on the local stack', () => {
      expect(refusedUrl('http://hooks.example.com/x')).toMatchObject({ ok: false, reason: 'scheme_not_allowed' });
      expect(refusedUrl('ftp://hooks.example.com/x', true)).toMatchObject({ ok: false, reason: 'scheme_not_allowed' });
      expect(refusedUrl('https://hooks.example.com/x')).toMatchObject({ ok: true, literal: null });
      expect(refusedUrl('http://127.0.0.1:8080/x', true)).toMatchObject({ ok: true, literal: '127.0.0.1' });
      expect(refusedUrl('not a url')).toMatchObject({ ok: false, reason: 'invalid_url' });
      expect(refusedUrl('https://user:pw@hooks.example.com/')).toMatchObject({
        ok: false,
        reason: 'credentials_in_url',
      });
    });

    // each odd spelling of 127.0.0.1 is normalised by the URL parser, then refused as loopback
    it.each([
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://0x7f.1/',
      'https://127.0.0.1./',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[0:0:0:0:0:ffff:7f00:0001]/',
      'https://localhost/',
      'https://api.localhost/',
    ])('refuses the loopback spelling %s', (url) => {
      expect(refusedUrl(url)).toMatchObject({ ok: false, reason: 'address_refused' });
    });

    it.each([
      ['https://169.254.169.254/latest/meta-data/', 'metadata'],
      ['https://2852039166/', 'metadata'],
      ['https://[fd00:ec2::254]/', 'metadata'],
      ['https://10.1/', 'private'],
      ['https://0/', 'this_network'],
      ['https://[fe80::1]/', 'link_local'],
    ])('refuses the literal %s (%s)', (url, category) => {
      const r = refusedUrl(url);
      expect(r).toMatchObject({ ok: false, reason: 'address_refused' });
      expect((r as { detail: string }).detail).toContain(category);
    });

    it('allows literal public addresses', () => {
      expect(refusedUrl('https://8.8.8.8/hook')).toMatchObject({ ok: true, literal: '8.8.8.8' });
      expect(refusedUrl('https://[2606:4700::1111]/hook')).toMatchObject({ ok: true, literal: '2606:4700::1111' });
    });

    it('refuses a port other than 443 or 8443 on a deployment (a public name of our own database or a mail server)', () => {
      for (const port of ['5432', '6543', '22', '25', '6379', '80']) {
        expect(refusedUrl(`https://hooks.example:${port}/hook`)).toMatchObject({
          ok: false,
          reason: 'port_not_allowed',
        });
      }
      expect(refusedUrl('https://hooks.example:443/hook')).toMatchObject({ ok: true });
      expect(refusedUrl('https://hooks.example:8443/hook')).toMatchObject({ ok: true });
      expect(refusedUrl('https://8.8.8.8:5432/')).toMatchObject({ ok: false, reason: 'port_not_allowed' });
      // the local stack's receivers listen on any port
      expect(refusedUrl('http://127.0.0.1:54999/hook', true)).toMatchObject({ ok: true });
      expect(webhookUrlProblem('https://hooks.example:5432/hook', { local: false })).toBe('must use port 443 or 8443');
    });

    it('allows loopback on the local stack, and nothing else private there', () => {
      expect(refusedUrl('http://127.0.0.1:9/', true)).toMatchObject({ ok: true });
      expect(refusedUrl('http://[::1]:9/', true)).toMatchObject({ ok: true });
      expect(refusedUrl('http://10.0.0.1/', true)).toMatchObject({ ok: false, reason: 'address_refused' });
      expect(refusedUrl('http://169.254.169.254/', true)).toMatchObject({ ok: false, reason: 'address_refused' });
    });
  });

  describe('checkDestination (the resolved addresses)', () => {
    const dns: Record<string, string[]> = {
      'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      'private.example': ['10.0.0.1'],
      'mixed.example': ['93.184.215.14', '192.168.0.7'],
      'metadata.example': ['169.254.169.254'],
      'mapped.example': ['::ffff:127.0.0.1'],
      'nat64.example': ['64:ff9b::10.0.0.1'],
      'loop.example': ['127.0.0.1'],
      'empty.example': [],
      'garbage.example': ['not-an-address'],
    };
    const asked: string[] = [];
    const resolver: Resolver = async (host) => {
      asked.push(host);
      const a = dns[host];
      if (!a) throw Object.assign(new Error('no such name'), { name: 'NotFound' });
      return a;
    };

    it('allows a host whose every address is public', async () => {
      expect(await checkDestination('https://public.example/hook', resolver, { local: false })).toMatchObject({
        ok: true,
        addresses: dns['public.example'],
      });
    });

    it.each(['private', 'mixed', 'metadata', 'mapped', 'nat64', 'loop'])(
      'refuses %s.example (one refused address refuses it)',
      async (name) => {
        expect(await checkDestination(`https://${name}.example/`, resolver, { local: false })).toMatchObject({
          ok: false,
          reason: 'address_refused',
        });
      },
    );

    it('allows a host resolving to loopback on the local stack only', async () => {
      expect(await checkDestination('http://loop.example/', resolver, { local: true })).toMatchObject({ ok: true });
      expect(await checkDestination('http://private.example/', resolver, { local: true })).toMatchObject({
        ok: false,
        reason: 'address_refused',
      });
    });

    it('fails on a name that does not resolve, resolves to nothing, or to a non-address', async () => {
      for (const name of ['missing', 'empty', 'garbage']) {
        expect(await checkDestination(`https://${name}.example/`, resolver, { local: false }), name).toMatchObject({
          ok: false,
          reason: 'dns_failed',
        });
      }
    });

    it('resolves every time and never asks the resolver for a literal address', async () => {
      asked.length = 0;
      await checkDestination('https://public.example/', resolver, { local: false });
      await checkDestination('https://public.example/', resolver, { local: false });
      await checkDestination('https://8.8.8.8/', resolver, { local: false });
      expect(asked).toEqual(['public.example', 'public.example']);
    });
  });
});

describe('webhook retry schedule (shared/webhooks/schedule.ts)', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const delay = (attempt: number, r: number) =>
    (nextAttemptAt(attempt, now, () => r) as Date).getTime() - now.getTime();

  it('starts at 5 seconds and grows, adding up to about 72 hours', () => {
    expect(RETRY_DELAYS_MS[0]).toBe(5_000);
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++) {
      expect(RETRY_DELAYS_MS[i] as number).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i - 1] as number);
    }
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(70 * H);
    expect(total).toBeLessThan(74 * H);
    // with the jitter at either extreme the whole run stays within 20% of it
    const run = (r: number) =>
      Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => delay(i + 1, r)).reduce((a, b) => a + b);
    expect(run(0)).toBe(Math.round(total * 0.8));
    expect(run(0.5)).toBe(total);
    expect(run(0.9999999)).toBeLessThanOrEqual(Math.round(total * 1.2));
  });

  it('moves each delay by at most 20% either way', () => {
    expect(JITTER).toBe(0.2);
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const base = RETRY_DELAYS_MS[attempt - 1] as number;
      expect(delay(attempt, 0)).toBe(Math.round(base * 0.8));
      expect(delay(attempt, 0.5)).toBe(base);
      expect(delay(attempt, 0.9999999)).toBeLessThanOrEqual(Math.round(base * 1.2));
      expect(delay(attempt, 0.9999999)).toBeGreaterThan(Math.round(base * 1.19));
      for (let k = 0; k < 50; k++) {
        const d = delay(attempt, Math.random());
        expect(d).toBeGreaterThanOrEqual(Math.round(base * 0.8));
        expect(d).toBeLessThanOrEqual(Math.round(base * 1.2));
      }
    }
    // a random source out of range cannot push it further
    expect(delay(1, -5)).toBe(4_000);
    expect(delay(1, 7)).toBe(6_000);
  });

  it('gives up after the last delay, and refuses a nonsense attempt number', () => {
    expect(nextAttemptAt(MAX_ATTEMPTS - 1, now, () => 0.5)).not.toBeNull();
    expect(nextAttemptAt(MAX_ATTEMPTS, now, () => 0.5)).toBeNull();
    expect(nextAttemptAt(MAX_ATTEMPTS + 5, now, () => 0.5)).toBeNull();
    expect(() => nextAttemptAt(0, now)).toThrow(RangeError);
    expect(() => nextAttemptAt(1.5, now)).toThrow(RangeError);
  });
});

describe('webhook secrets (shared/webhooks/secrets.ts)', () => {
  const keyText = toBase64(crypto.getRandomValues(new Uint8Array(32)));

  it('generates whsec_ secrets of 32 random bytes, never the same twice', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect(isWebhookSecret(a)).toBe(true);
    expect(isWebhookSecret('whsec_' + toBase64(new Uint8Array(16)))).toBe(false);
    expect(isWebhookSecret('sk_' + toBase64(new Uint8Array(32)))).toBe(false);
  });

  it('round-trips through the stored form, with a fresh IV each time', async () => {
    const key = await importSecretKey(keyText);
    const secret = generateSecret();
    const one = await encryptSecret(secret, key);
    const two = await encryptSecret(secret, key);
    expect(one).toMatch(/^v1:[A-Za-z0-9+/=]{16}:[A-Za-z0-9+/=]+$/);
    expect(one.split(':')[1]).not.toBe(two.split(':')[1]);
    expect(one).not.toContain(secret.slice(6));
    expect(await decryptSecret(one, key)).toBe(secret);
    expect(await decryptSecret(two, key)).toBe(secret);
  });

  it('refuses an altered stored secret', async () => {
    const key = await importSecretKey(keyText);
    const stored = await encryptSecret(generateSecret(), key);
    const [v, iv, ct] = stored.split(':') as [string, string, string];
    const bytes = Uint8Array.from(atob(ct), (c) => c.charCodeAt(0));
    bytes[3] = (bytes[3] as number) ^ 1;
    const flipped = `${v}:${iv}:${toBase64(bytes)}`;
    await expect(decryptSecret(flipped, key)).rejects.toThrow(/does not decrypt/);
    const otherIv = `${v}:${toBase64(new Uint8Array(12))}:${ct}`;
    await expect(decryptSecret(otherIv, key)).rejects.toThrow(/does not decrypt/);
    await expect(decryptSecret(`v2:${iv}:${ct}`, key)).rejects.toThrow(/known version/);
    await expect(decryptSecret('garbage', key)).rejects.toThrow(/known version/);
  });

  it('refuses the wrong key', async () => {
    const stored = await encryptSecret(generateSecret(), await importSecretKey(keyText));
    const other = await importSecretKey(toBase64(crypto.getRandomValues(new Uint8Array(32))));
    await expect(decryptSecret(stored, other)).rejects.toThrow(/does not decrypt/);
  });

  it('takes WEBHOOK_SECRET_KEY as the base64 of exactly 32 bytes, never echoing it', async () => {
    await expect(webhookSecretKey({})).rejects.toThrow('WEBHOOK_SECRET_KEY is missing');
    const short = toBase64(new Uint8Array(16));
    await expect(webhookSecretKey({ WEBHOOK_SECRET_KEY: short })).rejects.toThrow(/32 bytes/);
    await expect(webhookSecretKey({ WEBHOOK_SECRET_KEY: '%%%' })).rejects.toThrow(/base64/);
    await expect(webhookSecretKey({ WEBHOOK_SECRET_KEY: short })).rejects.not.toThrow(short);
    const key = await webhookSecretKey({ WEBHOOK_SECRET_KEY: keyText });
    expect(await decryptSecret(await encryptSecret('whsec_x', key), key)).toBe('whsec_x');
  });
});

describe('webhook signatures (shared/webhooks/sign.ts)', () => {
  const event = { type: 'escrow.funded', data: { escrow_id: 'e_1', amount: 150_000 } };
  const occurredAt = new Date('2026-11-27T10:00:00.000Z');
  const body = webhookBody(event.type, event.data, occurredAt);

  it('has the body { type, timestamp, data }', () => {
    expect(JSON.parse(body)).toEqual({
      type: 'escrow.funded',
      timestamp: '2026-11-27T10:00:00.000Z',
      data: event.data,
    });
  });

  it("is verified by the package's Webhook.verify, and not with another secret or a changed body", () => {
    const secret = generateSecret();
    const id = newMessageId();
    const headers = webhookHeaders([secret], id, new Date(), body);
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(secret).verify(body.replace('150000', '150001'), headers)).toThrow(/No matching/);
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': newMessageId() })).toThrow(/No matching/);
  });

  it('carries two signatures during a rotation, each verifiable by the package', () => {
    const previous = generateSecret();
    const current = generateSecret();
    const rotatedAt = new Date(Date.now() - 2 * H);
    const secrets = signingSecrets({ current, previous, rotatedAt }, new Date());
    expect(secrets).toEqual([current, previous]);
    const headers = webhookHeaders(secrets, newMessageId(), new Date(), body);
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow(/No matching/);
  });

  it('drops the previous secret 24 hours after the rotation', () => {
    const rotatedAt = new Date('2026-11-27T00:00:00Z');
    const s = { current: 'whsec_new', previous: 'whsec_old', rotatedAt };
    expect(signingSecrets(s, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS - 1))).toEqual([
      'whsec_new',
      'whsec_old',
    ]);
    expect(signingSecrets(s, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS))).toEqual(['whsec_new']);
    expect(signingSecrets({ current: 'whsec_new' }, new Date())).toEqual(['whsec_new']);
    expect(ROTATION_OVERLAP_MS).toBe(24 * H);
  });

  it('refuses to sign with no secret', () => {
    expect(() => signatureHeader([], 'msg_1', new Date(), body)).toThrow(/at least one secret/);
  });
});

describe('docs/webhooks.md', () => {
  it('shows the receiver example of tests/docs-examples/webhook-receiver/verify.ts (type-checked by tsc)', () => {
    const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
    const block = [...read('docs/webhooks.md').matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
      .map((m) => m[1] as string)
      .find((b) => b.includes('verifyEscrowWebhook'));
    const example = read('tests/docs-examples/webhook-receiver/verify.ts');
    expect(block).toBe(example.slice(example.indexOf('import ')));
  });
});
