// Ports for the stacks a suite starts of its own. A fixed offset from the test stack's ports can
// land on a port the system lent to an outgoing connection (the test stack's ports sit in Linux's
// ephemeral range, 32768-60999), and `npm start` then refuses it as in use. The system's own
// choice of a free port avoids that, and startServerOnFreePorts tries again with new ports in the
// rare case another socket takes one between the choice and the bind.
import { createServer } from 'node:net';
import { type Server, type ServerOptions, startServer } from './stack.ts';

/** A port nothing is bound to right now (the system picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const addr = probe.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface OwnStack {
  server: Server;
  httpPort: number;
  pgPort: number;
}

/**
 * startServer on two ports the system chose, with the environment env(httpPort, pgPort); when the
 * start is refused because a port is already in use, once more with new ports (up to 3 starts).
 */
export async function startServerOnFreePorts(
  options: Omit<ServerOptions, 'env'> & { env(httpPort: number, pgPort: number): Record<string, string> },
): Promise<OwnStack> {
  for (let attempt = 1;; attempt++) {
    const httpPort = await freePort();
    let pgPort = await freePort();
    while (pgPort === httpPort) pgPort = await freePort();
    try {
      const server = await startServer({ ...options, env: options.env(httpPort, pgPort) });
      return { server, httpPort, pgPort };
    } catch (err) {
      if (attempt >= 3 || !String((err as Error).message).includes('is already in use')) throw err;
    }
  }
}
