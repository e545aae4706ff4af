// The operator audit (docs/operators.md#the-audit): one append-only row per operator action and
// per opening of a user's picture or an escrow's timeline, written by private.operator_record in
// the transaction of what it records. Facts are ids and statuses; identity numbers never whole.
import type { Tx } from '../core/db.ts';
import type { OperatorCaller, OperatorRole } from './auth.ts';

/** One audit row: what an operator did or opened, on what, why, and the facts around it. */
export interface AuditEntry {
  /** '<area>.<verb>', e.g. 'user.freeze', 'escrow.read', 'approval.decide'. */
  action: string;
  /** The roles that allow it: the operator must still hold one (any role when omitted). */
  roles?: readonly OperatorRole[];
  targetType: string | null;
  targetId: string | null;
  /** The operator's reason (10-500 characters, validated by the endpoint's schema). */
  reason: string | null;
  /** Ids and statuses before and after; nothing a user typed, no identity number whole. */
  facts?: Record<string, unknown>;
}

/** Writes `entry` for `operator` in `tx`; refuses 404 operator_not_found for a role revoked meanwhile. */
export async function recordAudit(tx: Tx, operator: OperatorCaller, entry: AuditEntry): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    select private.operator_record(
      ${operator.id}, ${entry.roles ? [...entry.roles] : null}::text[], ${entry.action}, ${entry.targetType},
      ${entry.targetId}::uuid, ${entry.reason}, ${tx.json((entry.facts ?? {}) as never)}
    )::text as id`;
  return row!.id;
}
