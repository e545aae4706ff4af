// Four eyes (docs/operators.md#four-eyes). An operator action that needs a second operator is
// stored as a pending approval (private.approval_request) and answered 202 with it; a second
// operator approves it with admin-approval-decide, which performs the action then, in the
// transaction that marks the approval approved (private.approval_take): two approvals racing
// perform it once, and an action its re-check refuses leaves the approval pending.
//
// Each action is a FourEyesAction: what it needs before the transaction (a provider's answer),
// what it does in the transaction, and what it starts after the commit. The same object performs
// the action directly when no second operator is needed, so both paths run the same code.
import { getConfig } from '../core/config.ts';
import { asService, type Tx } from '../core/db.ts';
import { type Refusals, Reply } from '../core/endpoint.ts';
import { toNaira } from '../core/money.ts';
import type { OperatorCaller, OperatorRole } from './auth.ts';
import type { ApprovalResponse } from './schema.ts';

/** An approval as private.approvals stores it (timestamps as ISO strings: shared/core/db.ts parses them so). */
export interface ApprovalRow {
  id: string;
  action: string;
  target_type: string;
  target_id: string;
  params: Record<string, unknown>;
  amount: string | null;
  roles: OperatorRole[];
  reason: string;
  requested_by: string;
  requested_at: string;
  expires_at: string;
  status: 'pending' | 'approved' | 'rejected';
  decided_by: string | null;
  decided_at: string | null;
  decision_reason: string | null;
}

/**
 * An operator action that may wait for a second operator. P: its parameters (the request body
 * less the reason, stored in the approval); R: what it answers when performed.
 */
export interface FourEyesAction<P, R, Prepared = undefined> {
  /** '<area>.<verb>', as in the audit. */
  action: string;
  /** The operator endpoint that asks for it (its refusals are the action's too). */
  endpoint: string;
  /** The roles that may perform it, and so approve it. */
  roles: readonly OperatorRole[];
  targetType: string;
  targetOf(params: P): string;
  /** What performing it may refuse with, on its re-check: admin-approval-decide declares these too. */
  refusals: Refusals;
  /** Reads and provider calls before the transaction (e.g. the provider's verify of a charge). */
  prepare?(params: P): Promise<Prepared>;
  /**
   * Performs the action in `tx` (re-checking the state: a refusal rolls back the approval too),
   * writing its own audit row with recordAudit. `approvalId` is set when a second operator approved it.
   */
  perform(
    tx: Tx,
    operator: OperatorCaller,
    params: P,
    reason: string,
    prepared: Prepared,
    approvalId?: string,
  ): Promise<R>;
  /** What starts after the commit (a payout, an SMS). */
  after?(result: R): Promise<void>;
}

/** Whether an action moving `kobo` needs a second operator: more than FOUR_EYES_MIN_AMOUNT. */
export function aboveFourEyes(kobo: bigint | number): boolean {
  return BigInt(kobo) > BigInt(getConfig().FOUR_EYES_MIN_AMOUNT);
}

/** An approval as the API answers it. */
export function approvalAnswer(a: ApprovalRow, now = new Date()): ApprovalResponse {
  const expired = a.status === 'pending' && new Date(a.expires_at).getTime() <= now.getTime();
  return {
    id: a.id,
    action: a.action,
    target_type: a.target_type,
    target_id: a.target_id,
    amount: a.amount === null ? null : toNaira(a.amount),
    roles: a.roles,
    status: expired ? 'expired' : a.status,
    reason: a.reason,
    requested_by: a.requested_by,
    requested_at: a.requested_at,
    expires_at: a.expires_at,
    decided_by: a.decided_by,
    decided_at: a.decided_at,
    decision_reason: a.decision_reason,
  };
}

/** Stores the action as pending (or finds the pending one of the same action and target): the 202. */
export async function requestApproval<P>(
  def: FourEyesAction<P, unknown, unknown>,
  operator: OperatorCaller,
  params: P,
  reason: string,
  amountKobo: bigint | number | null,
): Promise<Reply<{ approval: ApprovalResponse }>> {
  const [row] = await asService((tx) =>
    tx<ApprovalRow[]>`
      select * from private.approval_request(
        ${operator.id}, ${def.action}, ${def.targetType}, ${def.targetOf(params)}::uuid,
        ${tx.json(params as never)}, ${amountKobo === null ? null : String(amountKobo)}::bigint,
        ${[...def.roles]}::text[], ${reason}
      )`
  );
  return new Reply(202, { approval: approvalAnswer(row!) });
}

/** Performs the action now, without a second operator: prepare, the transaction, then what follows. */
export async function performNow<P, R, Prepared>(
  def: FourEyesAction<P, R, Prepared>,
  operator: OperatorCaller,
  params: P,
  reason: string,
  prepared?: Prepared,
): Promise<R> {
  const ready = prepared ?? (def.prepare ? await def.prepare(params) : undefined as Prepared);
  const result = await asService((tx) => def.perform(tx, operator, params, reason, ready));
  if (def.after) await def.after(result);
  return result;
}

/** Approves `approvalId` and performs its action in the same transaction; answers the approval. */
export async function performApproved<P, R, Prepared>(
  def: FourEyesAction<P, R, Prepared>,
  decider: OperatorCaller,
  approval: ApprovalRow,
  reason: string,
): Promise<ApprovalRow> {
  const params = approval.params as P;
  const ready = def.prepare ? await def.prepare(params) : undefined as Prepared;
  const [taken, result] = await asService(async (tx) => {
    const [row] = await tx<
      ApprovalRow[]
    >`select * from private.approval_take(${approval.id}, ${decider.id}, ${reason})`;
    const out = await def.perform(tx, decider, params, approval.reason, ready, approval.id);
    await tx`select private.approval_done(${approval.id}, ${tx.json((out ?? null) as never)})`;
    return [row!, out] as const;
  });
  if (def.after) await def.after(result);
  return taken;
}
