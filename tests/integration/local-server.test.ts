// docs/security.md, "Input, headers and the local server": what every answer carries (nosniff; the
// reference page's CSP as a header, framing refused), the page's bare path redirected to its folder,
// and the local server's bounds on slow clients, through raw TCP sockets (node:net): a request head
// that never ends is cut off after 10 s, a body after the stack's 5 s (HTTP_BODY_TIMEOUT_MS), and a
// client that goes away mid-body is no error in the log and no 500.
import { readFileSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { baseUrl, call, get, post } from '../support/api.ts';
import { signUp } from '../support/users.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';

const origin = () => new URL(baseUrl()).origin;

async function raw(path: string, init: RequestInit = {}) {
  return await fetch(`${origin()}${path}`, { redirect: 'manual', ...init });
}

const nosniff = (h: Headers) => expect(h.get('x-content-type-options')).toBe('nosniff');

describe('answers of the functions and the local server', () => {
  it('every function answer carries X-Content-Type-Options: nosniff, errors and preflights included', async () => {
    const user = await signUp();
    nosniff((await get(profileGet, { token: user.accessToken })).headers); // 200
    nosniff((await get(profileGet)).headers); // 401
    nosniff((await post(authSendOtp, { phone: 'nope', context: 'signup' } as never)).headers); // 400
    nosniff((await call(authSendOtp, { method: 'GET' })).headers); // 405
    nosniff((await call(authSendOtp, { method: 'OPTIONS' })).headers); // 204
    nosniff((await call('no-such-function')).headers); // the server's 404
  });

  it('serves the reference page with its CSP as a header, framing refused, and nosniff on each file', async () => {
    const page = await raw('/functions/v1/docs/');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    nosniff(page.headers);
    for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'config.js', 'missing.js']) {
      const r = await raw(`/functions/v1/docs/${file}`);
      await r.body?.cancel();
      nosniff(r.headers);
    }
  });

  it('redirects /functions/v1/docs to /functions/v1/docs/, where the assets resolve', async () => {
    const r = await raw('/functions/v1/docs');
    expect([301, 308]).toContain(r.status);
    expect(r.headers.get('location')).toBe('/functions/v1/docs/');
    nosniff(r.headers);
    const css = await raw(new URL('./swagger-ui.css', `${origin()}/functions/v1/docs/`).pathname);
    expect(css.status).toBe(200);
    await css.body?.cancel();
  });
});

/** A raw connection to the server; `closed` resolves with the ms it stayed open once the server closes it. */
function open(): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  const { hostname, port } = new URL(origin());
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let data = '';
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - started)));
      resolve({ socket, received: () => data, closed });
    });
    socket.on('data', (d) => (data += d.toString()));
    socket.once('error', reject);
  });
}

/** Resolves with `value` after ms, unless the test moved on. */
const after = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

describe('slow clients', () => {
  it('closes a connection whose request head is still coming after 10 s (one header line every 2 s)', async () => {
    const { socket, closed } = await open();
    socket.write('POST /functions/v1/auth-send-otp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const drip = setInterval(() => socket.write(`X-Slow-${Date.now()}: 1\r\n`), 2_000);
    try {
      // generous upper bound: the point is that it is closed at all
      const ms = await Promise.race([closed, after(25_000, -1)]);
      expect(ms, 'the connection was still open after 25 s').toBeGreaterThan(0);
      expect(ms).toBeGreaterThanOrEqual(9_000);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  }, 40_000);

  it('answers 408 and closes a connection whose body is still coming after the bound', async () => {
    const { socket, received, closed } = await open();
    socket.write(
      'POST /functions/v1/auth-send-otp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000\r\n\r\n{"phone":',
    );
    const drip = setInterval(() => socket.write(' '), 1_000);
    try {
      const ms = await Promise.race([closed, after(25_000, -1)]);
      expect(ms, 'the connection was still open after 25 s').toBeGreaterThan(0);
      expect(received()).toMatch(/^HTTP\/1\.1 408/);
      expect(received().toLowerCase()).toContain('x-content-type-options: nosniff');
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  }, 40_000);

  it('a client that goes away mid-body leaves no error line in the log, and no 500', async () => {
    const log = inject('serverLog');
    expect(log, 'the runner did not say where the server log is').not.toBe('');
    const from = statSync(log).size;
    for (let i = 0; i < 3; i++) {
      const { socket, closed } = await open();
      socket.write(
        'POST /functions/v1/auth-send-otp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 500\r\n\r\n{"phone":"0803',
      );
      await after(200, null);
      socket.destroy();
      await closed;
    }
    // the server's line for each, which it writes once it has read what there was
    let lines: string[] = [];
    for (let i = 0; i < 50; i++) {
      await after(100, null);
      const text = readFileSync(log).subarray(from).toString();
      lines = text.split('\n').filter((l) => l.startsWith('{'));
      if (lines.filter((l) => /"http\.client_gone"|"level":"error"/.test(l)).length >= 3) break;
    }
    expect(lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
    expect(lines.filter((l) => l.includes('"status":500'))).toEqual([]);
    expect(lines.filter((l) => l.includes('"http.client_gone"'))).toHaveLength(3);
    // and the server still answers
    expect((await post(authSendOtp, { phone: 'nope', context: 'signup' } as never)).status).toBe(400);
  });
});
