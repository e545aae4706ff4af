-- =============================================================================================
-- Reconciliation takes turns: when a payment or transfer is still pending at the provider, the
-- job remembers when it last asked (private.reconcile_checks) and asks about the ones it asked
-- least recently first. Before this, each run took the 50 oldest pending movements, so once 50
-- stayed pending at the provider (a slow bank, an outage), every newer one waited forever.
-- =============================================================================================

create table private.reconcile_checks (
  transaction_id uuid primary key references public.transactions (id) on delete cascade,
  checked_at timestamptz not null
);
comment on table private.reconcile_checks is
  'When the job last asked the provider about a movement that was still pending (the oldest asked goes first).';
alter table private.reconcile_checks enable row level security;
create policy "Service role manages reconcile checks" on private.reconcile_checks
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.reconcile_checks to service_role;
