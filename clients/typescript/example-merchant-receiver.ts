// A merchant's webhook receiver, as docs/merchants.md's integration guide runs it: it verifies each
// delivery's Standard Webhooks signature over the raw body, answers at once, and hands every event
// on once (a delivery whose answer was lost is sent again with the same webhook-id). It runs on
// Node and Deno (node:http). tests/e2e/merchant-story.clock.test.ts receives the story's webhooks with it.
// Not part of the package.
//
// From the repository, with the endpoint's secret:
//   WEBHOOK_SECRET=whsec_... node_modules/.bin/deno run --allow-net=127.0.0.1 --allow-env=WEBHOOK_SECRET \
//     clients/typescript/example-merchant-receiver.ts 8787
// prints each event as one JSON line: {"id":"msg_...","type":"escrow.funded","data":{...}}.
import { createServer, type IncomingMessage } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export type MerchantEvent = {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
};

const MAX_BODY_BYTES = 1 << 20;

async function rawBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Listens on 127.0.0.1:`port` (0: any free port); `onEvent` gets each verified event once. */
export function startReceiver(options: {
  port: number;
  secret: string; // the endpoint's whsec_ secret (merchant-webhook-create answers it once)
  onEvent: (event: MerchantEvent) => void | Promise<void>;
}): Promise<{ url: string; close: () => Promise<void> }> {
  const verifier = new Webhook(options.secret);
  const seen = new Set<string>(); // handled webhook-ids (a real receiver keeps them in its database)
  const server = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await rawBody(req) : null;
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let event: MerchantEvent;
    try {
      if (body === null) throw new WebhookVerificationError('not a delivery');
      // the signature over the exact bytes received, and a timestamp within 5 minutes of now
      const parsed = verifier.verify(body, headers) as Omit<
        MerchantEvent,
        'id'
      >;
      event = { id: headers['webhook-id'], ...parsed };
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      res.writeHead(400).end();
      return;
    }
    res.writeHead(204).end(); // answer first, work after: a slow answer is a failed delivery
    if (seen.has(event.id)) return;
    seen.add(event.id);
    await options.onEvent(event);
  });
  return new Promise((resolve) => {
    server.listen(options.port, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      resolve({
        url: `http://127.0.0.1:${port}/webhooks`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections(); // a sender's kept-alive connection would hold the close
          }),
      });
    });
  });
}

// run as a program: print each event on its own line
if ((import.meta as { main?: boolean }).main) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    throw new Error('set WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  }
  const { url } = await startReceiver({
    port: Number(process.argv[2] ?? 8787),
    secret,
    onEvent: (e) => console.log(JSON.stringify({ id: e.id, type: e.type, data: e.data })),
  });
  console.error(`receiving on ${url}`);
}
