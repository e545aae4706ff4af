// Every call this service makes to another service (Paystack, Termii, Sumsub, the identity
// provider, the sandboxes' webhooks) goes through providerFetch: during a bearer request it first
// makes sure the caller's session is live (shared/core/db.ts ensureSessionLive), so a token of an ended
// session never costs a provider call, an SMS or a charge. A unit test keeps bare fetch out of shared/.
import { ensureSessionLive } from './db.ts';

export async function providerFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  await ensureSessionLive();
  return await fetch(input, init);
}
