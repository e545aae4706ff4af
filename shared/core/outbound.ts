// Every call this service makes to another service (Paystack, Termii, Sumsub, the identity
// provider, the sandboxes' webhooks) goes through providerFetch: during a bearer request it first
// makes sure the caller's session is live (shared/core/db.ts ensureSessionLive), so a token of an ended
// session never costs a provider call, an SMS or a charge. A unit test keeps bare fetch out of shared/.
//
// No provider is called from inside an atomic Idempotency-Key's open transaction: that would hold
// the transaction, its locks and its connection for as long as the provider takes. An endpoint
// that calls a provider says so (`idempotent: 'provider'`); one that forgot fails here, loudly.
import { ensureSessionLive } from './db.ts';
import { currentKeyClaim } from './key-claim.ts';

export async function providerFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  if (currentKeyClaim()?.state === 'open') {
    throw new Error(`provider call inside an atomic idempotent request (${currentKeyClaim()?.operation})`);
  }
  await ensureSessionLive();
  return await fetch(input, init);
}
