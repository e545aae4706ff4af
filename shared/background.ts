// Work that follows an answer instead of delaying it (DESIGN §5: the SMS provider is called after
// the answer is sent). On Supabase the edge runtime is told to keep the function alive until the
// work settles (EdgeRuntime.waitUntil); elsewhere (the local server, tests) it is a promise of its
// own. The work starts on a later turn of the event loop, after the handler has returned its
// Response, and a failure is logged, never thrown at the client.
import { errorMessage, log } from './log.ts';

type EdgeRuntimeLike = { waitUntil(promise: Promise<unknown>): void };

const pending = new Set<Promise<void>>();

export function afterResponse(task: string, work: () => Promise<unknown>): void {
  const run: Promise<void> = new Promise<void>((resolve) => setTimeout(resolve, 0))
    .then(work)
    .then(
      () => {},
      (err) => log.error('background.failed', { task, error: errorMessage(err) }),
    )
    .finally(() => pending.delete(run));
  pending.add(run);
  const runtime = (globalThis as { EdgeRuntime?: EdgeRuntimeLike }).EdgeRuntime;
  runtime?.waitUntil(run);
}

/** Resolves when every background task started so far has settled (server shutdown, tests). */
export async function backgroundSettled(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}
