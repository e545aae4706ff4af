// The local server's bound on slow request heads. Deno.serve waits for a request's head for as long
// as the client takes, so a client that sends its headers a byte at a time (slowloris) holds a
// connection for ever. The functions server therefore listens on an ephemeral loopback port, and
// this guard owns the public port: it copies each connection both ways, and closes one whose
// request head (up to the blank line) has not arrived within `headerTimeoutMs` of the connection
// opening or of the previous answer starting, which also ends a keep-alive connection left idle that
// long. The body's bound is the server's (scripts/lib/server.ts). docs/security.md, "Input, headers
// and the local server".

const HEAD_END = [13, 10, 13, 10]; // \r\n\r\n

export interface SlowGuard {
  /** The client's address of a connection, by the guard's own port on the server's side of it. */
  clientOf(upstreamPort: number): string | undefined;
  /** Closes the connection whose server side is on this port (a body that took too long). */
  close(upstreamPort: number): void;
  /** Resolves once the public listener has closed (after `signal`). */
  finished: Promise<void>;
}

export function slowGuard(opts: {
  hostname: string;
  port: number;
  upstream: () => Deno.NetAddr;
  headerTimeoutMs: number;
  signal?: AbortSignal;
}): SlowGuard {
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const connections = new Map<number, { client: string; close: () => void }>();
  const open = new Set<() => void>();
  opts.signal?.addEventListener('abort', () => {
    listener.close();
    for (const close of open) close();
  }, { once: true });

  async function serve(conn: Deno.TcpConn) {
    let upstream: Deno.TcpConn;
    try {
      const { hostname, port } = opts.upstream();
      upstream = await Deno.connect({ hostname, port });
    } catch {
      conn.close();
      return;
    }
    let closed = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      for (const c of [conn, upstream]) {
        try {
          c.close();
        } catch { /* closed already */ }
      }
      connections.delete(upstreamPort);
      open.delete(close);
    };
    const upstreamPort = (upstream.localAddr as Deno.NetAddr).port;
    connections.set(upstreamPort, { client: (conn.remoteAddr as Deno.NetAddr).hostname, close });
    open.add(close);

    // waiting for a head: the timer runs; `matched` counts the bytes of \r\n\r\n seen in a row,
    // `started` whether any byte of this head came yet
    let waitingForHead = true;
    let started = false;
    let matched = 0;
    const awaitHead = () => {
      waitingForHead = true;
      started = false;
      matched = 0;
      clearTimeout(timer);
      timer = setTimeout(close, opts.headerTimeoutMs);
    };
    awaitHead();

    const toServer = (async () => {
      const buf = new Uint8Array(16 * 1024);
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        const chunk = buf.subarray(0, n);
        if (waitingForHead) {
          started = true;
          for (const b of chunk) {
            matched = b === HEAD_END[matched] ? matched + 1 : b === 13 ? 1 : 0;
            if (matched === 4) {
              waitingForHead = false;
              clearTimeout(timer);
              break;
            }
          }
        }
        await writeAll(upstream, chunk);
      }
    })();
    const toClient = (async () => {
      const buf = new Uint8Array(16 * 1024);
      for (;;) {
        const n = await upstream.read(buf);
        if (n === null) break;
        // an answer is being sent: the next head is awaited from its last byte on
        if (!waitingForHead || !started) awaitHead();
        await writeAll(conn, buf.subarray(0, n));
      }
    })();
    await Promise.race([toServer, toClient]).catch(() => {});
    close();
    await Promise.allSettled([toServer, toClient]);
  }

  const finished = (async () => {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept() as Deno.TcpConn;
      } catch {
        break; // the listener was closed
      }
      void serve(conn).catch(() => {});
    }
  })();

  return {
    clientOf: (port) => connections.get(port)?.client,
    close: (port) => connections.get(port)?.close(),
    finished,
  };
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await conn.write(data.subarray(written));
}
