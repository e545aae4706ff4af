// The chat screen of README.md ("Live updates": the same code, tests/unit/client.test.ts compares
// them), run against the real service by tests/e2e/client-stream.test.ts. Not part of the package.
import { createEscrowClient, type Data, EscrowApiError, streamEvents, unwrap } from './index.ts';

type FeedItem = Data<'message-feed'>[number];

export function openChat(options: {
  baseUrl: string;
  accessToken: () => string | undefined; // the current session's token
  conversation: { conversation_id: string; escrow_id: string }; // a row of conversation-list
  render: (items: FeedItem[]) => void; // draws the conversation, oldest first
  onSignedOut: () => void; // the session ended: show the login screen
  onError: (error: unknown) => void; // a read that failed: show it, or retry later
  signal: AbortSignal; // abort it when the screen closes
  fetch?: (request: Request) => Promise<Response>; // optional: globalThis.fetch by default
}): Promise<void> {
  const { baseUrl, accessToken, conversation, fetch, signal } = options;
  const api = createEscrowClient({ baseUrl, accessToken, fetch });
  const items = new Map<string, FeedItem>(); // by id: an item read twice is shown once
  const show = () =>
    options.render(
      [...items.values()].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)),
    );
  const load = () =>
    unwrap(api.GET('/message-feed', { params: { query: { conversation_id: conversation.conversation_id } } }))
      .then((feed) => {
        for (const item of feed) items.set(item.id, item);
        show();
      })
      .catch(options.onError);

  let loaded = false;
  return streamEvents({
    baseUrl,
    accessToken,
    fetch,
    signal,
    // Read the feed once the stream is live: a message sent in between comes by both, shown once.
    // The reconnections that follow resume after the last event, so they need no new read.
    onOpen: () => {
      if (!loaded) void load();
      loaded = true;
    },
    onEvent: (event) => {
      if (event.event === 'message' && event.data.escrow_id === conversation.escrow_id) {
        items.set(event.data.id, event.data);
        show();
      } else if (event.event === 'reset') {
        void load(); // too much was missed: read the conversation again
      }
    },
  }).catch((e: unknown) => {
    if (e instanceof EscrowApiError && e.status === 401) options.onSignedOut();
    else throw e;
  });
}
