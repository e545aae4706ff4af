// deno-lint-ignore-file no-explicit-any -- answers of the real server are read as untyped JSON here
// The Termii adapter against a local HTTP fake that answers in Termii's documented shape
// (POST /api/sms/send, JSON body with api_key, to, from, sms, type, channel).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsError, termiiSender } from '../../shared/core/sms.ts';

let server: Server;
let base = '';
const received: { path: string; body: any }[] = [];
let answer: { status: number; body: unknown } = { status: 200, body: {} };

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.on('data', (c) => (s += c));
    req.on('end', () => resolve(s));
  });

beforeAll(async () => {
  server = createServer(async (req, res) => {
    received.push({ path: req.url ?? '', body: JSON.parse((await read(req)) || 'null') });
    res.writeHead(answer.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const sender = () => termiiSender({ baseUrl: base, apiKey: 'TL-test-key', senderId: 'Escrow', channel: 'dnd' });

describe('termiiSender', () => {
  it("posts Termii's send shape: number without +, sender id, plain type, the channel", async () => {
    answer = {
      status: 200,
      body: { code: 'ok', message_id: '9122821270554876574', message: 'Successfully Sent', balance: 9, user: 'Escrow' },
    };
    await sender().send('+2348012345678', 'Your code is 123456');
    const last = received.at(-1);
    expect(last?.path).toBe('/api/sms/send');
    expect(last?.body).toEqual({
      api_key: 'TL-test-key',
      to: '2348012345678',
      from: 'Escrow',
      sms: 'Your code is 123456',
      type: 'plain',
      channel: 'dnd',
    });
  });

  it('raises SmsError when Termii refuses (HTTP error, or a body without code ok)', async () => {
    answer = { status: 400, body: { message: 'Insufficient balance' } };
    await expect(sender().send('+2348012345678', 'x')).rejects.toBeInstanceOf(SmsError);
    answer = { status: 200, body: { message: 'queued?' } };
    await expect(sender().send('+2348012345678', 'x')).rejects.toThrow(/refused/);
  });

  it('raises SmsError, without the API key in the message, when Termii cannot be reached', async () => {
    const dead = termiiSender({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'TL-secret-key',
      senderId: 'Escrow',
      channel: 'dnd',
    });
    const err = (await dead.send('+2348012345678', 'x').then(() => null, (e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(SmsError);
    expect(err.message).not.toContain('TL-secret-key');
  });
});
