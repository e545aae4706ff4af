// The operator API's lists of the operators area: the approvals (admin-approval-list, any
// operator: pending first, oldest first) and the audit (admin-audit-list, admins only, newest
// first). Reading the audit is itself an audit row (audit.read).
import { asService } from '../core/db.ts';
import type { OperatorCaller } from './auth.ts';
import { approvalAnswer, type ApprovalRow } from './approvals.ts';
import { recordAudit } from './audit.ts';
import type { ApprovalResponse, AuditRowResponse } from './schema.ts';

type ApprovalStatus = ApprovalResponse['status'];

/** admin-approval-list: pending (still decidable) first, then the rest, each oldest first; paged by id. */
export function adminApprovalList(
  _op: OperatorCaller,
  q: { status?: ApprovalStatus; limit: number; after?: string },
): Promise<ApprovalResponse[]> {
  return asService(async (tx) => {
    const live = tx`(x.status = 'pending' and x.expires_at > now())`;
    const filter = q.status === undefined
      ? tx`true`
      : q.status === 'pending'
      ? live
      : q.status === 'expired'
      ? tx`(x.status = 'pending' and x.expires_at <= now())`
      : tx`x.status = ${q.status}`;
    const rows = await tx<(ApprovalRow & { rank: number })[]>`
      with a as (
        select x.*, case when ${live} then 0 else 1 end as rank
          from private.approvals x where ${filter}
      )
      select * from a
       where ${
      q.after === undefined
        ? tx`true`
        : tx`(a.rank, a.requested_at, a.id) > (select b.rank, b.requested_at, b.id from a b where b.id = ${q.after})`
    }
       order by a.rank, a.requested_at, a.id
       limit ${q.limit}`;
    const now = new Date();
    return rows.map(({ rank: _rank, ...row }) => approvalAnswer(row as ApprovalRow, now));
  });
}

/** admin-audit-list: the audit, newest first, filtered; the read is recorded (audit.read). */
export function adminAuditList(
  op: OperatorCaller,
  q: { operator_id?: string; target_id?: string; action?: string; limit: number; after?: string },
): Promise<AuditRowResponse[]> {
  return asService(async (tx) => {
    const conds = [
      q.operator_id === undefined ? tx`true` : tx`a.admin_id = ${q.operator_id}`,
      q.target_id === undefined ? tx`true` : tx`a.target_id = ${q.target_id}`,
      q.action === undefined ? tx`true` : tx`a.action = ${q.action}`,
      q.after === undefined ? tx`true` : tx`a.id < ${q.after}::bigint`,
    ];
    const rows = await tx<{
      id: string;
      admin_id: string;
      action: string;
      target_type: string | null;
      target_id: string | null;
      reason: string | null;
      details: Record<string, unknown>;
      created_at: string;
    }[]>`
      select a.id::text as id, a.admin_id, a.action, a.target_type, a.target_id, a.reason, a.details, a.created_at
        from private.admin_audit a
       where ${conds[0]!} and ${conds[1]!} and ${conds[2]!} and ${conds[3]!}
       order by a.id desc
       limit ${q.limit}`;
    // recorded after the read, so the page shows what was there before this look
    await recordAudit(tx, op, {
      action: 'audit.read',
      roles: ['admin'],
      targetType: null,
      targetId: null,
      reason: null,
      facts: {
        operator_id: q.operator_id ?? null,
        target_id: q.target_id ?? null,
        action: q.action ?? null,
        after: q.after ?? null,
        limit: q.limit,
        rows: rows.length,
      },
    });
    return rows.map((r) => ({
      id: r.id,
      operator_id: r.admin_id,
      action: r.action,
      target_type: r.target_type,
      target_id: r.target_id,
      reason: r.reason,
      facts: r.details,
      created_at: r.created_at,
    }));
  });
}
