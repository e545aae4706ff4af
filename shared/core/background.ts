// Work that follows a committed transaction and must never undo it: sending the SMS it queued,
// handing the payout it started to the provider. Every such call goes through one of the two
// helpers below, so a failure is always logged (`background.failed` with the task's name), never
// thrown at the client and never swallowed in silence; what is left undone stays queued in the
// database for the job (SMS not sent, payouts never handed over).
//
// afterCommit runs the work now and the caller awaits it, so the answer reflects it (a payout
// already with the provider). afterResponse runs it after the answer instead of delaying it (the
// SMS provider is called after the answer is sent; docs/auth.md, "Enumeration resistance"): on
// Supabase the edge runtime is told to keep the function alive until the work settles
// (EdgeRuntime.waitUntil); elsewhere
// (the local server, tests) it is a promise of its own, started on a later turn of the event loop,
// after the handler has returned its Response.
//
// Under an atomic Idempotency-Key the request's transactions are one, committed only once the
// answer is known (shared/core/idempotency.ts): work asked for while it is open waits for that
// commit, in the order it was asked.
import { errorMessage, log } from './log.ts';
import { currentKeyClaim } from './key-claim.ts';

type EdgeRuntimeLike = { waitUntil(promise: Promise<unknown>): void };

const pending = new Set<Promise<void>>();

/** Runs work that follows a commit; resolves when it is done, also when it failed (logged). */
export async function afterCommit(task: string, work: () => Promise<unknown>): Promise<void> {
  const claim = currentKeyClaim();
  if (claim?.state === 'open') {
    claim.deferred.push({ task, work, afterResponse: false });
    return;
  }
  try {
    await work();
  } catch (err) {
    log.error('background.failed', { task, error: errorMessage(err) });
  }
}

/** The same as afterCommit, after the answer has gone out. */
export function afterResponse(task: string, work: () => Promise<unknown>): void {
  const claim = currentKeyClaim();
  if (claim?.state === 'open') {
    claim.deferred.push({ task, work, afterResponse: true });
    return;
  }
  const run: Promise<void> = new Promise<void>((resolve) => setTimeout(resolve, 0))
    .then(() => afterCommit(task, work))
    .finally(() => pending.delete(run));
  pending.add(run);
  const runtime = (globalThis as { EdgeRuntime?: EdgeRuntimeLike }).EdgeRuntime;
  runtime?.waitUntil(run);
}

/** Resolves when every background task started so far has settled (server shutdown, tests). */
export async function backgroundSettled(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}
