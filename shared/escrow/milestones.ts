// Milestones of a hiring escrow: proposed by either party, editable while proposed, accepted when
// both approve, completed by the freelancer, released by the client (a ledger transfer out of the
// escrow's hold, referenced by release_tx_id). Writes are SQL functions; reads run under RLS.
// None of them queues an SMS; a release may start a payout, sent after the commit.
import { afterCommit } from '../core/background.ts';
import { asService, asUser, type UserClaims } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import { type MilestoneResponse, milestoneResponse } from './schema.ts';
import { columnsOf, type RowOf, selectList } from '../core/rows.ts';
import { ESCROW_NOT_FOUND, MILESTONE_NOT_FOUND } from './refusals.ts';
import { toNaira } from '../core/money.ts';
import { startEscrowPayout } from '../money/payouts.ts';

/** A milestone as stored: the answer's fields, the amount in kobo. */
type MilestoneRow = RowOf<MilestoneResponse, never, { amount: string }>;

/** The answer's columns; due_date is read as text (a date, never shifted by a time zone). */
const MILESTONE_SELECT = selectList(columnsOf(milestoneResponse), { casts: { due_date: 'text' } });

const milestoneView = (m: MilestoneRow): MilestoneResponse => ({ ...m, amount: toNaira(m.amount) });

async function readMilestone(claims: UserClaims, id: string) {
  return asUser(claims, async (tx) => {
    const [m] = await tx<MilestoneRow[]>`select ${tx.unsafe(MILESTONE_SELECT)} from public.milestones where id = ${id}`;
    if (!m) throw MILESTONE_NOT_FOUND.error({});
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
    if (!escrow) throw ESCROW_NOT_FOUND.error({});
    const rows = await tx<MilestoneRow[]>`
      select ${
      tx.unsafe(MILESTONE_SELECT)
    } from public.milestones where escrow_id = ${escrowId} order by milestone_index`;
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
