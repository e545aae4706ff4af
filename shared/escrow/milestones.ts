// Milestones of a hiring escrow: proposed by either party, editable while proposed, accepted when
// both approve, completed by the freelancer, released by the client (a ledger transfer out of the
// escrow's hold, referenced by release_tx_id). Writes are SQL functions; reads run under RLS.
// None of them queues an SMS; a release may start a payout, sent after the commit.
import { afterCommit } from '../core/background.ts';
import { asService, asUser, type UserClaims } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import type { MilestoneStatus } from './enums.ts';
import { notFound } from '../core/http.ts';
import { toNaira } from '../core/money.ts';
import { startEscrowPayout } from '../money/payouts.ts';

interface MilestoneRow {
  id: string;
  escrow_id: string;
  created_by: string;
  milestone_index: number;
  title: string;
  description: string | null;
  amount: string;
  due_date: string | null;
  status: MilestoneStatus;
  initiator_approved: boolean;
  counterparty_approved: boolean;
  changes_note: string | null;
  release_tx_id: string | null;
  created_at: string;
  updated_at: string;
  accepted_at: string | null;
  completed_at: string | null;
  released_at: string | null;
}

const milestoneView = (m: MilestoneRow) => ({
  id: m.id,
  escrow_id: m.escrow_id,
  created_by: m.created_by,
  milestone_index: m.milestone_index,
  title: m.title,
  description: m.description,
  amount: toNaira(m.amount),
  due_date: m.due_date,
  status: m.status,
  initiator_approved: m.initiator_approved,
  counterparty_approved: m.counterparty_approved,
  changes_note: m.changes_note,
  release_tx_id: m.release_tx_id,
  created_at: m.created_at,
  updated_at: m.updated_at,
  accepted_at: m.accepted_at,
  completed_at: m.completed_at,
  released_at: m.released_at,
});

async function readMilestone(claims: UserClaims, id: string) {
  return asUser(claims, async (tx) => {
    const [m] = await tx<MilestoneRow[]>`select *, due_date::text as due_date from public.milestones where id = ${id}`;
    if (!m) throw notFound('Milestone not found');
    return milestoneView(m);
  });
}

export async function milestoneCreate(
  user: AuthUser,
  input: { escrow_id: string; title: string; amount: number; description?: string; due_date?: string },
) {
  const [row] = await asService((tx) =>
    tx<{ id: string }[]>`
    select private.milestone_create(${input.escrow_id}, ${user.id}, ${input.title}, ${input.description ?? null},
                                    ${input.amount}, ${input.due_date ?? null}::date) as id`
  );
  return readMilestone(user.claims, (row as { id: string }).id);
}

export async function milestoneUpdate(
  user: AuthUser,
  input: {
    milestone_id: string;
    title?: string;
    description?: string | null;
    amount?: number;
    due_date?: string | null;
    changes_note?: string;
  },
) {
  const { milestone_id, ...changes } = input;
  await asService((tx) =>
    tx`select private.milestone_update(${milestone_id}, ${user.id}, ${tx.json(changes as never)})`
  );
  return readMilestone(user.claims, milestone_id);
}

export async function milestoneList({ claims }: AuthUser, escrowId: string) {
  return asUser(claims, async (tx) => {
    const [escrow] = await tx`select 1 from public.escrows where id = ${escrowId}`;
    if (!escrow) throw notFound('Escrow not found');
    const rows = await tx<MilestoneRow[]>`
      select *, due_date::text as due_date from public.milestones where escrow_id = ${escrowId} order by milestone_index`;
    return rows.map(milestoneView);
  });
}

export async function milestoneApprove(user: AuthUser, id: string) {
  await asService((tx) => tx`select private.milestone_approve(${id}, ${user.id})`);
  return readMilestone(user.claims, id);
}

export async function milestoneComplete(user: AuthUser, id: string) {
  await asService((tx) => tx`select private.milestone_complete(${id}, ${user.id})`);
  return readMilestone(user.claims, id);
}

export async function milestoneRelease(user: AuthUser, id: string) {
  const [row] = await asService((tx) =>
    tx<{ payout: string | null }[]>`select private.milestone_release(${id}, ${user.id}) as payout`
  );
  const payoutTx = row?.payout;
  if (payoutTx) await afterCommit('escrow.payout', () => startEscrowPayout(payoutTx));
  return readMilestone(user.claims, id);
}
