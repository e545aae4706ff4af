// A TCP proxy in front of PostgreSQL for tests that watch or break what our code sends it
// (./pg-round-trips.ts counts, ./pg-fault-proxy.ts cuts): each client connection gets one to
// Postgres, and either side closing or failing closes both.
import net from 'node:net';

export interface PgProxy {
  /** postgres://... through the proxy, with the target's user, password and database. */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the proxy on a port of the system's choosing; `wire` adds the data handlers of each
 * connection (and `cut` closes both sides).
 */
export async function startPgProxy(
  targetUrl: string,
  wire: (client: net.Socket, upstream: net.Socket, cut: () => void) => void,
): Promise<PgProxy> {
  const target = new URL(targetUrl);
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
    wire(client, upstream, cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
