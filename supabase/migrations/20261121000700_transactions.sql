-- =============================================================================================
-- Transactions: the user-facing record of every money movement (the spec's Transaction): top-ups,
-- deposits, withdrawals and the escrow movements. A user reads their own; rows are written only
-- by the SQL functions of the wallet and escrow areas, in the transaction that moves the money
-- (the ledger's transfers name the transaction they belong to).
-- =============================================================================================

create type public.transaction_category as enum ('deposit', 'withdrawal', 'escrow');
create type public.transaction_direction as enum ('in', 'out');
create type public.transaction_status as enum ('pending', 'succeeded', 'failed', 'canceled');

create table public.transactions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete restrict,
  type text not null check (type in (
    'wallet_topup', 'virtual_account_deposit', 'withdrawal',
    'escrow_funding', 'escrow_release', 'escrow_refund', 'escrow_payout', 'escrow_fee'
  )),
  category public.transaction_category not null,
  -- the description as a message ({kind, ...params}), rendered by shared/messages.ts when read
  message jsonb check (message is null or (pg_catalog.jsonb_typeof(message) = 'object' and message ? 'kind')),
  amount bigint not null check (amount > 0),
  currency text not null default 'NGN' check (currency = 'NGN'),
  direction public.transaction_direction not null,
  status public.transaction_status not null default 'pending',
  escrow_id uuid,
  milestone_id uuid,
  provider text not null check (provider in ('paystack', 'sandbox', 'wallet')),
  provider_charge_id text,
  provider_transfer_id text,
  provider_refund_id text,
  metadata jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  constraint transactions_completed check ((status = 'pending') = (completed_at is null)),
  constraint transactions_escrow_fk foreign key (escrow_id) references public.escrows (id)
);
comment on table public.transactions is
  'The user-facing record of every money movement (deposits, withdrawals, escrows). Users read their own.';
comment on column public.transactions.message is
  'What the description says, as {kind, ...params}: rendered by shared/messages.ts when read (null: no description).';
-- transaction-list pages by created_at descending for one user, with the created_at of the last
-- row as the cursor. That is exact only if no two rows of a user share a created_at: the trigger
-- below makes each new row's created_at later than every earlier row of the same owner, and the
-- unique index proves it.
create unique index transactions_user_created_key on public.transactions (user_id, created_at desc);
create trigger transactions_created_at_increasing before insert on public.transactions
  for each row execute function private.strictly_increasing_created_at('user_id');
create index transactions_escrow_id_idx on public.transactions (escrow_id) where escrow_id is not null;
create index transactions_provider_charge_id_idx on public.transactions (provider_charge_id)
  where provider_charge_id is not null;
alter table public.transactions enable row level security;

revoke all on public.transactions from anon, authenticated;
grant select on public.transactions to authenticated;
grant select, insert, update on public.transactions to service_role;

create policy "Users can read their own transactions"
  on public.transactions for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Service role manages transactions" on public.transactions
  for all to service_role using (true) with check (true);
