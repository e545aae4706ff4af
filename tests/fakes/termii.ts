// A local Termii for tests, in Termii's documented shape: POST /api/sms/send with a JSON body
// {api_key, to, from, sms, type, channel}, answered {code: 'ok', message_id, message, balance, user}.
// `hold()` keeps every answer back until `release()`, so a test can see whether a client waits for it.
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface TermiiMessage {
  path: string;
  body: { api_key: string; to: string; from: string; sms: string; type: string; channel: string };
}

export interface FakeTermii {
  url: string;
  received: TermiiMessage[];
  /** Answers wait until release() from now on. */
  hold(): void;
  /** Answers every held request and stops holding. */
  release(): void;
  /** Requests received and not yet answered. */
  held(): number;
  close(): Promise<void>;
}

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.on('data', (c) => (s += c));
    req.on('end', () => resolve(s));
  });

export async function startFakeTermii(): Promise<FakeTermii> {
  const received: TermiiMessage[] = [];
  let holding = false;
  const waiting: (() => void)[] = [];
  let seq = 0;
  const server: Server = createServer(async (req, res) => {
    received.push({ path: req.url ?? '', body: JSON.parse((await read(req)) || 'null') });
    const answer = () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          code: 'ok',
          message_id: `fake-${++seq}`,
          message: 'Successfully Sent',
          balance: 1000,
          user: 'Escrow',
        }),
      );
    };
    if (holding) waiting.push(answer);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const answer of waiting.splice(0)) answer();
    },
    held: () => waiting.length,
    close: () =>
      new Promise<void>((r) => {
        for (const answer of waiting.splice(0)) answer();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
