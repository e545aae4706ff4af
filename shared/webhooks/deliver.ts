// One attempt at delivering one webhook (docs/webhooks.md). The queue decides when to call it
// (schedule.ts) and records what it returns; this file only sends. In order:
// 1. the destination is checked: the URL's rules, then every address its host resolves to now
//    (address.ts); a refused destination is a failure before any connection is opened;
// 2. the body and the Standard Webhooks headers are built, signed with every secret given (sign.ts);
// 3. the request goes out through providerFetch with `redirect: 'manual'` (a 3xx is a failure, never
//    followed: it could point anywhere) and one deadline for the whole attempt (10 s);
// 4. at most 4 KiB of the answer is read, as the excerpt the delivery log keeps; the rest is dropped
//    unread, so a receiver cannot make us read (or store) a large or endless body.
// A 2xx within the deadline is a success; anything else is a failure with a reason code.
import { providerFetch } from '../core/outbound.ts';
import { checkDestination, type DestinationRefusal, type Resolver } from './address.ts';
import { webhookBody, webhookHeaders } from './sign.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;
export const EXCERPT_MAX_BYTES = 4096;

export type DeliveryFailure =
  | DestinationRefusal
  | 'timeout'
  | 'network_error'
  | 'redirect'
  | 'client_error'
  | 'server_error'
  | 'unexpected_status';

export type DeliveryResult = {
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed (absent on success). */
  reason?: DeliveryFailure;
  /** A few words on the failure for the log (the refused address and its category, ...); no secrets. */
  detail?: string;
  /** The first 4 KiB at most of the answer's body, as text. */
  excerpt: string;
  duration_ms: number;
};

export type WebhookEvent = { type: string; data: Record<string, unknown>; occurredAt: Date };

export type DeliveryRequest = {
  url: string;
  /** The message id (webhook-id): the same for every attempt of one event to one endpoint. */
  id: string;
  event: WebhookEvent;
  /** Plain `whsec_` secrets: the current one, and the previous one during a rotation (signingSecrets). */
  secrets: readonly string[];
};

export type DeliveryOptions = {
  resolver: Resolver;
  /** The local stack (getConfig().local): http and loopback receivers allowed. */
  local: boolean;
  /** The deadline of the whole attempt; 10 s unless a test shortens it. */
  timeoutMs?: number;
  /** The attempt's time, for webhook-timestamp. */
  now?: () => Date;
  /** What sends the request; providerFetch unless a test puts a stub in its place. */
  fetch?: (input: URL, init: RequestInit) => Promise<Response>;
};

function statusFailure(status: number): DeliveryFailure {
  if (status === 0 || (status >= 300 && status < 400)) return 'redirect';
  if (status >= 400 && status < 500) return 'client_error';
  if (status >= 500 && status < 600) return 'server_error';
  return 'unexpected_status';
}

/** Up to `max` bytes of a body, then the stream is cancelled; a read cut short keeps what came. */
async function readCapped(res: Response, max: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < max) {
      const { done, value } = await reader.read();
      if (done) break;
      const piece = value.subarray(0, max - total);
      chunks.push(piece);
      total += piece.length;
    }
  } catch {
    // the deadline or the connection ended the body: keep what was read
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(bytes);
}

/** The system's error code when there is one (Node: ECONNREFUSED ...), else the message, short. */
function networkDetail(err: TypeError): string {
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : err.message.slice(0, 200);
}

export async function deliver(req: DeliveryRequest, opts: DeliveryOptions): Promise<DeliveryResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  const destination = await checkDestination(req.url, opts.resolver, { local: opts.local });
  if (!destination.ok) {
    return { ok: false, reason: destination.reason, detail: destination.detail, excerpt: '', duration_ms: took() };
  }

  const body = webhookBody(req.event.type, req.event.data, req.event.occurredAt);
  const headers = webhookHeaders(req.secrets, req.id, (opts.now ?? (() => new Date()))(), body);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    let res: Response;
    try {
      res = await (opts.fetch ?? providerFetch)(destination.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: controller.signal,
      });
    } catch (err) {
      if (timedOut) return { ok: false, reason: 'timeout', excerpt: '', duration_ms: took() };
      // fetch reports a network failure as a TypeError; anything else is our bug, not the receiver's
      if (!(err instanceof TypeError)) throw err;
      return { ok: false, reason: 'network_error', detail: networkDetail(err), excerpt: '', duration_ms: took() };
    }
    const excerpt = await readCapped(res, EXCERPT_MAX_BYTES);
    const status = res.type === 'opaqueredirect' ? 0 : res.status;
    if (status >= 200 && status < 300) return { ok: true, status, excerpt, duration_ms: took() };
    return { ok: false, status, reason: statusFailure(status), excerpt, duration_ms: took() };
  } finally {
    clearTimeout(timer);
  }
}
