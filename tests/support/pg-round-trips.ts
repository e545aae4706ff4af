// A TCP proxy in front of PostgreSQL that counts what the code in this process sends it, as the
// bench's profile does (scripts/lib/request-path.ts, countingProxy, which runs under Deno): a round
// trip is each time a client speaks again after Postgres answered it; statements are Postgres's
// CommandComplete and ErrorResponse messages. Meant for one request at a time.
import { startPgProxy } from './pg-proxy.ts';

export interface RoundTripProxy {
  /** postgres://... through the proxy, with the target's user, password and database. */
  url: string;
  counts: { statements: number; roundTrips: number };
  reset(): void;
  close(): Promise<void>;
}

export async function startRoundTripProxy(targetUrl: string): Promise<RoundTripProxy> {
  const counts = { statements: 0, roundTrips: 0 };
  const proxy = await startPgProxy(targetUrl, (client, upstream) => {
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
  return {
    url: proxy.url,
    counts,
    reset() {
      counts.statements = 0;
      counts.roundTrips = 0;
    },
    close: proxy.close,
  };
}
