// Which URLs a merchant may register as a webhook endpoint (shared/merchants/webhook-schema.ts
// webhookUrlProblem), on a deployment and on the local stack: the rules of shared/webhooks/address.ts
// that hold whatever the host resolves to. The suite of the operations is
// tests/integration/merchant-webhooks.clock.test.ts; this one sees the deployment's side, which the
// local test stack cannot.
import { describe, expect, it } from 'vitest';
import { webhookUrlProblem } from '../../shared/merchants/webhook-schema.ts';

const deployed = (url: string) => webhookUrlProblem(url, { local: false });
const local = (url: string) => webhookUrlProblem(url, { local: true });

describe('a webhook URL at registration', () => {
  it('takes a public https URL anywhere', () => {
    for (const url of ['https://hooks.example.com/escrow', 'https://203.0.114.9:8443/in', 'https://[2a00:1450::1]/']) {
      expect(deployed(url), url).toBeNull();
      expect(local(url), url).toBeNull();
    }
  });

  it('refuses plain http on a deployment, and takes it on the local stack', () => {
    expect(deployed('http://hooks.example.com/escrow')).toBe('must be an https URL');
    expect(local('http://hooks.example.com/escrow')).toBeNull();
  });

  it('refuses a user or a password in the URL everywhere', () => {
    for (const url of ['https://user:pw@hooks.example.com/', 'https://user@hooks.example.com/']) {
      expect(deployed(url), url).toBe('must not hold a user name or password');
      expect(local(url), url).toBe('must not hold a user name or password');
    }
  });

  it('refuses loopback on a deployment, in any spelling, and takes it on the local stack (its test receivers)', () => {
    for (
      const url of [
        'https://127.0.0.1/',
        'https://2130706433/',
        'https://0x7f000001/',
        'https://127.1/',
        'https://[::1]/',
        'https://localhost/',
      ]
    ) {
      expect(deployed(url), url).toMatch(/^must not point at a private, loopback or reserved address/);
      expect(local(url), url).toBeNull();
    }
  });

  it('refuses private, link-local, metadata and other non-public literal addresses everywhere', () => {
    for (
      const url of [
        'https://10.0.0.7/',
        'https://172.16.4.1/',
        'https://192.168.1.1/',
        'https://169.254.169.254/latest/meta-data',
        'https://100.64.0.1/',
        'https://0.0.0.0/',
        'https://[fd00:ec2::254]/',
        'https://[::ffff:10.0.0.1]/',
      ]
    ) {
      expect(deployed(url), url).toMatch(/^must not point at/);
      expect(local(url), url).toMatch(/^must not point at/);
    }
  });

  it('leaves a host name to be resolved at every delivery', () => {
    // what internal.example.com resolves to can change after registration: the queue checks it each time
    expect(deployed('https://internal.example.com/')).toBeNull();
  });
});
