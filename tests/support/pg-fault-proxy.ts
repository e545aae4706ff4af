// A TCP proxy between our code and PostgreSQL that cuts a connection at a chosen moment, as a
// network fault or a crash would: before a statement reaches Postgres, or after Postgres committed
// but before its acknowledgement reaches the client. The moment is found in the protocol itself:
// a client message holding a marker (an Idempotency-Key), and the CommandComplete of COMMIT that
// follows it. Postgres sees a connection that closed; our code sees the error a lost connection
// gives. Only one fault is armed at a time, and it fires once.
import { startPgProxy } from './pg-proxy.ts';

export type FaultPoint =
  /** the first client message holding the marker never reaches Postgres; the connection closes */
  | 'before-statement'
  /** the marker's message goes through; the COMMIT that follows commits, and its answer is lost */
  | 'after-commit';

export interface FaultProxy {
  /** postgres://... through the proxy, with the target's user, password and database. */
  url: string;
  /** Arms one fault: the next connection to send `marker` (and, if given, `also`) is cut at `point`. */
  arm(fault: { marker: string; also?: string; point: FaultPoint }): void;
  /** How many faults fired so far. */
  fired(): number;
  close(): Promise<void>;
}

export async function startFaultProxy(targetUrl: string): Promise<FaultProxy> {
  let armed: { marker: string; also?: string; point: FaultPoint } | null = null;
  let fired = 0;

  const proxy = await startPgProxy(targetUrl, (client, upstream, cut) => {
    let cutAtCommit = false;
    client.on('data', (chunk: Buffer) => {
      // one read holds a whole statement here: our statements are small and written at once
      const text = chunk.toString('latin1');
      const fault = armed;
      if (fault && text.includes(fault.marker) && (!fault.also || text.includes(fault.also))) {
        armed = null;
        if (fault.point === 'before-statement') {
          fired++;
          cut();
          return;
        }
        cutAtCommit = true;
      }
      upstream.write(chunk);
    });

    // Postgres's messages, each a type byte and a length, followed one by one: `buf` starts at a
    // message boundary and its first `sent` bytes have gone to the client already
    let buf = Buffer.alloc(0);
    let sent = 0;
    upstream.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      let at = 0;
      while (buf.length - at >= 5) {
        const length = buf.readUInt32BE(at + 1);
        if (buf.length - at < 1 + length) break;
        if (cutAtCommit && buf[at] === 0x43 && buf.subarray(at + 5, at + 11).toString('latin1') === 'COMMIT') {
          if (at > sent) client.write(buf.subarray(sent, at)); // everything before the acknowledgement
          fired++;
          cut();
          return;
        }
        at += 1 + length;
      }
      // with a fault waiting for COMMIT, only whole messages go on (one may be COMMIT's answer)
      const until = cutAtCommit ? at : buf.length;
      if (until > sent) client.write(buf.subarray(sent, until));
      buf = buf.subarray(at);
      sent = Math.max(0, until - at);
    });
  });
  return {
    url: proxy.url,
    arm(fault) {
      armed = fault;
    },
    fired: () => fired,
    close: proxy.close,
  };
}
