// Disputes (docs/disputes.md). Every change is one SQL function in
// supabase/migrations/20261124000400_disputes.sql, under the escrow's lock: raise, propose,
// respond (an acceptance settles the money at once), withdraw, and the admin's resolution. What
// follows a settlement's commit here: the payee's bank payout and the SMS to both parties.
// Parties read a dispute as themselves (row-level security); admins through the admin endpoints.
import { afterCommit } from '../core/background.ts';
import { asService, asUser, type Fragment, type Tx } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import type { DisputeOutcome, DisputeReasonCode, DisputeStatus } from './enums.ts';
import type { EscrowStatus } from '../escrow/enums.ts';
import { ADMIN_IS_PARTY, DISPUTE_NOT_FOUND, DISPUTE_WRONG_STATE, SPLIT_EXCEEDS_HELD } from './refusals.ts';
import type { Reply } from '../core/endpoint.ts';
import type { OperatorCaller } from '../operators/auth.ts';
import { aboveFourEyes, type FourEyesAction, performNow, requestApproval } from '../operators/approvals.ts';
import type { ApprovalResponse } from '../operators/schema.ts';
import { toNaira } from '../core/money.ts';
import { startEscrowPayout } from '../money/payouts.ts';
import { startRefundsOf } from '../money/refunds.ts';
import {
  type AdminDisputeResponse,
  type DisputeResponse,
  disputeResponse,
  type ProposalResponse,
  proposalResponse,
} from './schema.ts';
import { answerOf, columnsOf, type RowOf } from '../core/rows.ts';
import { dispatchQueuedSms } from '../messages/sms-outbox.ts';

/** A dispute as stored: the answer's fields, and the outcome it was settled with (admins see it). */
type DisputeRow = RowOf<DisputeResponse, 'proposals', {
  outcome: AdminDisputeResponse['outcome'];
  payee_amount: string | null;
}>;

const DISPUTE_COLUMNS = columnsOf(disputeResponse, { computed: ['proposals'], stored: ['outcome', 'payee_amount'] });

/** A proposal as stored: the answer's fields, its dispute, the payee's share in kobo. */
type ProposalRow = RowOf<ProposalResponse, never, { dispute_id: string; payee_amount: string | null }>;

const PROPOSAL_COLUMNS = columnsOf(proposalResponse, { stored: ['dispute_id'] });

const proposalView = (p: ProposalRow): ProposalResponse =>
  answerOf(proposalResponse, { ...p, payee_amount: p.payee_amount === null ? null : toNaira(p.payee_amount) });

const disputeView = (d: DisputeRow, proposals: ProposalRow[]): DisputeResponse =>
  answerOf(disputeResponse, { ...d, proposals: proposals.map(proposalView) });

/** The escrow's open dispute, else its most recent one, with its open proposals; null when none. */
async function readDispute(tx: Tx, escrowId: string): Promise<DisputeResponse | null> {
  const [d] = await tx<DisputeRow[]>`
    select ${tx(DISPUTE_COLUMNS)} from public.disputes
     where escrow_id = ${escrowId}
     order by (status in ('negotiation', 'escalated')) desc, created_at desc
     limit 1`;
  if (!d) return null;
  const proposals = await tx<ProposalRow[]>`
    select ${tx(PROPOSAL_COLUMNS)} from public.dispute_proposals where dispute_id = ${d.id} and status = 'open'
     order by created_at`;
  return disputeView(d, proposals);
}

/**
 * dispute-get: as the caller (row-level security: the escrow's parties); an admin who is not a
 * party reads it through the service role (docs/disputes.md: visible to the parties and admins).
 */
export async function disputeGet({ claims }: AuthUser, escrowId: string): Promise<DisputeResponse> {
  const found = await asUser(claims, (tx) => readDispute(tx, escrowId)) ??
    await asService(async (tx) => {
      const [admin] = await tx<{ yes: boolean }[]>`select private.is_admin(${claims.sub}) as yes`;
      return admin?.yes ? readDispute(tx, escrowId) : null;
    });
  if (!found) throw DISPUTE_NOT_FOUND.error({ by: 'escrow' });
  return found;
}

/**
 * After a settlement committed: the payee's bank payout (if any), a merchant escrow's refund to its
 * buyer through the provider (if any) and the SMS to both parties.
 */
async function afterSettlement(payoutTx: string | null, escrowId: string): Promise<void> {
  if (payoutTx) await afterCommit('escrow.payout', () => startEscrowPayout(payoutTx));
  await afterCommit('escrow.refund', () => startRefundsOf({ escrowId }));
  await afterCommit('sms.dispatch', () => dispatchQueuedSms());
}

export async function disputeRaise(
  user: AuthUser,
  input: { escrow_id: string; reason_code: DisputeReasonCode; reason: string },
): Promise<DisputeResponse> {
  await asService((tx) =>
    tx`select private.dispute_raise(${input.escrow_id}, ${user.id}, ${input.reason_code}, ${input.reason}, now())`
  );
  return disputeGet(user, input.escrow_id);
}

export async function disputePropose(
  user: AuthUser,
  input: { escrow_id: string; outcome: DisputeOutcome; payee_amount?: number },
): Promise<DisputeResponse> {
  await asService((tx) =>
    tx`select private.dispute_propose(${input.escrow_id}, ${user.id}, ${input.outcome}, ${
      input.payee_amount ?? null
    }, now())`
  );
  return disputeGet(user, input.escrow_id);
}

export async function disputeRespond(
  user: AuthUser,
  input: { escrow_id: string; proposal_id: string; accept: boolean },
): Promise<DisputeResponse> {
  const [r] = await asService((tx) =>
    tx<{ status: string; payout_tx: string | null }[]>`
      select * from private.dispute_respond(${input.escrow_id}, ${user.id}, ${input.proposal_id}, ${input.accept}, now())`
  );
  if (r?.status === 'accepted') await afterSettlement(r.payout_tx, input.escrow_id);
  return disputeGet(user, input.escrow_id);
}

export async function disputeWithdraw(user: AuthUser, escrowId: string): Promise<DisputeResponse> {
  await asService((tx) => tx`select private.dispute_withdraw(${escrowId}, ${user.id}, now())`);
  return disputeGet(user, escrowId);
}

// ---- admins ------------------------------------------------------------------------------------

interface AdminRow extends DisputeRow {
  escrow_title: string;
  escrow_status: EscrowStatus;
  escrow_amount: string;
  unreleased_amount: string;
  payer_id: string;
  payer_first_name: string;
  payer_last_name: string;
  payee_id: string;
  payee_first_name: string;
  payee_last_name: string;
}

/** The admin queue's rows (service role: admins read every dispute), with every proposal made. */
async function adminRows(tx: Tx, where: Fragment, limit: number): Promise<AdminDisputeResponse[]> {
  const rows = await tx<AdminRow[]>`
    select ${tx(DISPUTE_COLUMNS.map((c) => `d.${c}`))},
           e.title as escrow_title, e.status as escrow_status, e.amount::text as escrow_amount,
           (e.amount - e.released_amount)::text as unreleased_amount,
           payer.id as payer_id, payer.first_name as payer_first_name, payer.last_name as payer_last_name,
           payee.id as payee_id, payee.first_name as payee_first_name, payee.last_name as payee_last_name
      from public.disputes d
      join public.escrows e on e.id = d.escrow_id
      join public.profiles payer on payer.id = private.payer_of(e)
      join public.profiles payee on payee.id = private.payee_of(e)
     where ${where}
     order by d.created_at, d.id
     limit ${limit}`;
  const ids = rows.map((r) => r.id);
  const proposals = ids.length === 0 ? [] : await tx<ProposalRow[]>`
    select ${tx(PROPOSAL_COLUMNS)} from public.dispute_proposals where dispute_id = any(${ids}::uuid[])
     order by created_at`;
  return rows.map((r) => ({
    ...disputeView(r, proposals.filter((p) => p.dispute_id === r.id)),
    escrow_title: r.escrow_title,
    escrow_status: r.escrow_status,
    escrow_amount: toNaira(r.escrow_amount),
    unreleased_amount: toNaira(r.unreleased_amount),
    outcome: r.outcome,
    payee_amount: r.payee_amount === null ? null : toNaira(r.payee_amount),
    payer: { id: r.payer_id, first_name: r.payer_first_name, last_name: r.payer_last_name },
    payee: { id: r.payee_id, first_name: r.payee_first_name, last_name: r.payee_last_name },
  }));
}

/** admin-dispute-list: the queue, oldest first (open disputes by default), `after` exclusive. */
export function adminDisputeList(
  admin: AuthUser,
  q: { status?: DisputeStatus; limit: number; after?: string },
): Promise<AdminDisputeResponse[]> {
  return asService(async (tx) => {
    await tx`select private.admin_record(${admin.id}, 'dispute.list', null, null, ${
      tx.json({ status: q.status ?? null, after: q.after ?? null, limit: q.limit } as never)
    })`;
    const status = q.status ? tx`d.status = ${q.status}` : tx`d.status in ('negotiation', 'escalated')`;
    const where = q.after ? tx`${status} and d.created_at > ${q.after}::timestamptz` : status;
    return adminRows(tx, where, q.limit);
  });
}

type ResolveParams = { dispute_id: string; outcome: DisputeOutcome; payee_amount?: number };

/**
 * The resolution as a four-eyes action (docs/disputes.md#four-eyes-on-large-resolutions): performed
 * at once when what the escrow still holds is at most FOUR_EYES_MIN_AMOUNT, else when a second
 * disputes operator approves it. private.admin_dispute_resolve re-checks the dispute under the
 * escrow's lock (dispute_wrong_state once it was settled or withdrawn meanwhile) and writes the
 * audit row (dispute.resolve, by the operator who performs it, with the first one's resolution).
 */
export const DISPUTE_RESOLVE: FourEyesAction<
  ResolveParams,
  { dispute_id: string; escrow_id: string; payout_tx: string | null }
> = {
  action: 'dispute.resolve',
  endpoint: 'admin-dispute-resolve',
  roles: ['disputes'],
  targetType: 'dispute',
  targetOf: (p) => p.dispute_id,
  refusals: [ADMIN_IS_PARTY, DISPUTE_NOT_FOUND, DISPUTE_WRONG_STATE, SPLIT_EXCEEDS_HELD],
  async perform(tx, operator, p, resolution) {
    const [r] = await tx<{ payout_tx: string | null; escrow_id: string }[]>`
      select private.admin_dispute_resolve(${p.dispute_id}, ${operator.id}, ${p.outcome}, ${
      p.payee_amount ?? null
    }, ${resolution}, now()) as payout_tx,
             (select escrow_id from public.disputes where id = ${p.dispute_id}) as escrow_id`;
    return { dispute_id: p.dispute_id, escrow_id: r!.escrow_id, payout_tx: r!.payout_tx };
  },
  after: (r) => afterSettlement(r.payout_tx, r.escrow_id),
};

/**
 * admin-dispute-resolve: settles an open dispute (audited in the same transaction), or, when the
 * escrow still holds more than FOUR_EYES_MIN_AMOUNT, answers 202 with the approval a second
 * operator gives. A dispute that cannot be resolved (unknown, closed, the operator a party, a split
 * too large) is refused at once, as before, not after a second operator's look.
 */
export async function adminDisputeResolve(
  admin: OperatorCaller,
  input: { dispute_id: string; outcome: DisputeOutcome; payee_amount?: number; resolution: string },
): Promise<AdminDisputeResponse | Reply<{ approval: ApprovalResponse }>> {
  const params: ResolveParams = {
    dispute_id: input.dispute_id,
    outcome: input.outcome,
    ...(input.payee_amount === undefined ? {} : { payee_amount: input.payee_amount }),
  };
  const [held] = await asService((tx) =>
    tx<{ unreleased: string; open: boolean; party: boolean }[]>`
      select (e.amount - e.released_amount)::text as unreleased, d.status in ('negotiation', 'escalated') as open,
             ${admin.id}::uuid in (e.initiator_id, e.counterparty_id) as party
        from public.disputes d join public.escrows e on e.id = d.escrow_id
       where d.id = ${input.dispute_id}`
  );
  const resolvable = held && held.open && !held.party &&
    (input.payee_amount === undefined || BigInt(input.payee_amount) < BigInt(held.unreleased));
  if (resolvable && aboveFourEyes(BigInt(held.unreleased))) {
    return requestApproval(DISPUTE_RESOLVE, admin, params, input.resolution, BigInt(held.unreleased));
  }
  await performNow(DISPUTE_RESOLVE, admin, params, input.resolution);
  const [resolved] = await asService((tx) => adminRows(tx, tx`d.id = ${input.dispute_id}`, 1));
  return resolved as AdminDisputeResponse;
}
