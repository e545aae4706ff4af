// A TCP proxy in front of PostgreSQL that counts what the code in this process sends it, as the
// bench's profile does (scripts/lib/request-path.ts, countingProxy, which runs under Deno): a round
// trip is each time a client speaks again after Postgres answered it; statements are Postgres's
// CommandComplete and ErrorResponse messages. Meant for one request at a time.
import net from 'node:net';

export interface RoundTripProxy {
  /** postgres://... through the proxy, with the target's user, password and database. */
  url: string;
  counts: { statements: number; roundTrips: number };
  reset(): void;
  close(): Promise<void>;
}

export async function startRoundTripProxy(targetUrl: string): Promise<RoundTripProxy> {
  const target = new URL(targetUrl);
  const counts = { statements: 0, roundTrips: 0 };
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', cut);
    upstream.on('error', cut);

    let last: 'client' | 'server' = 'server';
    client.on('data', (chunk: Buffer) => {
      if (last === 'server') counts.roundTrips++;
      last = 'client';
      upstream.write(chunk);
    });
    // Postgres's messages, each a type byte and a length: `pending` holds an unfinished one
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      last = 'server';
      const buf = Buffer.concat([pending, chunk]);
      let at = 0;
      while (buf.length - at >= 5) {
        const length = buf.readUInt32BE(at + 1);
        if (buf.length - at < 1 + length) break;
        if (buf[at] === 0x43 || buf[at] === 0x45) counts.statements++; // 'C', 'E'
        at += 1 + length;
      }
      pending = buf.subarray(at);
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    counts,
    reset() {
      counts.statements = 0;
      counts.roundTrips = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
