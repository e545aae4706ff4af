-- =============================================================================================
-- The operators' reads: indexes for admin-escrow-get's timeline, admin-search's references and
-- admin-queue-list's queues (docs/operators.md#reading-a-user-and-an-escrow, #queues)
-- =============================================================================================
-- admin-escrow-get reads an escrow's events from the event log by escrow; admin-search finds a
-- transfer by the provider's transfer or refund reference (its charge reference has an index
-- already); admin-queue-list counts what waits for an operator: each queue is a partial index of
-- the rows in it, ordered by when they started to wait, so a count reads that queue's rows only,
-- however many settled rows the tables hold.

create index if not exists events_escrow_idx on private.events (escrow_id, id) where escrow_id is not null;

create index if not exists transactions_provider_transfer_id_idx on public.transactions (provider_transfer_id)
  where provider_transfer_id is not null;
create index if not exists transactions_provider_refund_id_idx on public.transactions (provider_refund_id)
  where provider_refund_id is not null;

-- card charges held for review (private.charge_hold_for_review marks them metadata.review, pending)
create index if not exists transactions_held_charges_idx on public.transactions (created_at)
  where status = 'pending' and metadata ? 'review' and type in ('wallet_topup', 'escrow_funding');

-- failed payouts that no retry has taken over (a retry marks the failed row metadata.retried_by)
create index if not exists transactions_failed_payouts_idx on public.transactions (created_at)
  where status = 'failed' and type in ('withdrawal', 'escrow_payout') and not metadata ? 'retried_by';

-- escalated disputes, by when they were escalated (those in negotiation: disputes_deadline_idx)
create index if not exists disputes_escalated_idx on public.disputes (escalated_at) where status = 'escalated';

-- open operator flags (dropped by 20261127090000 until the back office read them: it does now)
create index if not exists operator_flags_open_idx on private.operator_flags (created_at) where resolved_at is null;
