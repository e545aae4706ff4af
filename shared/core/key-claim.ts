// The Idempotency-Key a request runs under, for the database layer (shared/core/db.ts), which
// claims it in the request's first statement, and for the work that follows a commit
// (shared/core/background.ts), which waits for the commit that carries the claim.
//
// An atomic claim (an operation that calls no provider) puts every transaction of the request
// into one: BEGIN and the claim go with the first statement, each of the handler's transactions
// becomes a savepoint of it, and the answer is stored just before the one COMMIT
// (shared/core/idempotency.ts). A provider claim rides in the request's first transaction and
// commits with it; the provider is called after, and the answer stored when it has answered.
import { AsyncLocalStorage } from 'node:async_hooks';

export type ClaimMode = 'atomic' | 'provider';

export interface KeyClaim {
  readonly userId: string;
  readonly operation: string;
  readonly key: string;
  /** SHA-256 of the operation and the raw body. */
  readonly hash: string;
  readonly mode: ClaimMode;
  /**
   * unclaimed: no statement has carried the claim yet; open: the atomic unit holds it, not
   * committed; claimed: committed with the first transaction (provider); done: the unit ended.
   */
  state: 'unclaimed' | 'open' | 'claimed' | 'done';
  /** What the claim answered: the reference movements are recorded under, and whether a dead claim was taken over. */
  found?: { reference: string; resumed: boolean };
  /** Work to run once the unit has committed (afterCommit and afterResponse while it is open). */
  readonly deferred: { task: string; work: () => Promise<unknown>; afterResponse: boolean }[];
}

const scope = new AsyncLocalStorage<KeyClaim>();

/** Runs fn with `claim` as the current request's Idempotency-Key. */
export function withKeyClaim<T>(claim: KeyClaim, fn: () => Promise<T>): Promise<T> {
  return scope.run(claim, fn);
}

/** Runs fn outside any request's Idempotency-Key (work for everyone, such as sending webhooks). */
export function outsideKeyClaim<T>(fn: () => Promise<T>): Promise<T> {
  return scope.exit(fn);
}

/** The current request's Idempotency-Key claim, if it has one. */
export function currentKeyClaim(): KeyClaim | undefined {
  return scope.getStore();
}

/**
 * Whether this request took over a claim whose first request died after committing it (a provider
 * operation): what that request recorded under the reference is there, and the provider may have
 * been called; the operation answers from the record instead of starting again.
 */
export function claimResumed(): boolean {
  return currentKeyClaim()?.found?.resumed === true;
}

/** Reads the claim's answer from the rows of the statement that carried it. */
export function noteClaim(claim: KeyClaim, row: unknown): void {
  const found = (row as { idempotency_claim?: { reference: string; resumed: boolean } } | undefined)
    ?.idempotency_claim;
  if (!found) throw new Error('the statement that carried the Idempotency-Key claim did not answer it');
  claim.found = found;
}

/** SQLSTATEs of private.idempotency_claim: replay the stored answer, another body, still running. */
export const CLAIM_REPLAY = 'ESRPL';
export const CLAIM_REUSED = 'ESKRU';
export const CLAIM_IN_PROGRESS = 'ESKIP';
