// The browser's EventSource of README.md ("In a browser: EventSource and a ticket": the same code,
// tests/unit/client.test.ts compares them and the type check compiles it). Not part of the package.
import { createEscrowClient, type StreamEventData, type StreamEventName, unwrap } from './index.ts';

export function watchWithEventSource(options: {
  baseUrl: string;
  accessToken: () => string | undefined;
  lastEventId?: string; // the last id this page received before, if any
  onMessage: (item: StreamEventData['message']) => void;
  onWallet: (wallet: StreamEventData['wallet']) => void;
  onReset: () => void; // read your state again
  onError: (error: unknown) => void; // no ticket (a 401: signed out)
}): () => void {
  const api = createEscrowClient({ baseUrl: options.baseUrl, accessToken: options.accessToken });
  let lastId = options.lastEventId ?? '';
  let source: EventSource | undefined;
  let closed = false;

  const open = async () => {
    // EventSource sends no Authorization header: a ticket (10 minutes, this session only) goes in the URL
    const { ticket } = await unwrap(api.POST('/events-ticket'));
    if (closed) return;
    const query = new URLSearchParams({ ticket });
    if (lastId) query.set('last_event_id', lastId);
    const es = new EventSource(`${options.baseUrl}/events-stream?${query}`);
    source = es;
    const on = <K extends StreamEventName>(name: K, handle: (data: StreamEventData[K]) => void) =>
      es.addEventListener(name, (e: MessageEvent<string>) => {
        lastId = e.lastEventId;
        handle(JSON.parse(e.data));
      });
    on('message', options.onMessage);
    on('wallet', options.onWallet);
    on('reset', () => options.onReset());
    es.addEventListener('error', () => {
      // While it can, EventSource reconnects by itself (with the same ticket and Last-Event-ID).
      // Closed means the service refused it (the ticket expired, the session ended, too many
      // streams): take a new ticket and resume after the last id.
      if (es.readyState === EventSource.CLOSED && !closed) setTimeout(() => open().catch(options.onError), 2_000);
    });
  };
  open().catch(options.onError);
  return () => {
    closed = true;
    source?.close();
  };
}
