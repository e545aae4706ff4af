-- Money core: a double-entry ledger, the user-facing transactions, wallets, virtual accounts,
-- saved cards, payout accounts, the webhook inbox and idempotency keys.
--
-- Ledger rules (proved by the test suite under concurrency):
--   * amounts are integer kobo; every transfer's entries sum to zero;
--   * transfers and entries are immutable (no UPDATE or DELETE, enforced by triggers);
--   * an account's balance always equals the sum of its entries, and the sum of all balances is 0;
--   * user wallets and escrow holds never go below zero;
--   * one SQL function, private.post_transfer, posts a transfer atomically and idempotently,
--     locking the accounts it touches in a fixed order (by id) so concurrent postings cannot
--     deadlock.
--
-- Hot accounts: the system accounts (provider clearing, platform fees, VAT payable) are split
-- into shards, rows of the same kind with their own balances. A posting picks the shard of its
-- database connection, so concurrent postings spread over many rows instead of queueing on one.
-- The balance of a system account is the sum of its shards (view private.system_balances).

-- ---------------------------------------------------------------------------------------------
-- Ledger
-- ---------------------------------------------------------------------------------------------

create type private.account_kind as enum (
  'user_wallet',        -- a user's spendable money (owner_id = user)
  'escrow_hold',        -- money locked in one escrow (owner_id = escrow)
  'provider_clearing',  -- money held for us by the payments provider (system, sharded)
  'platform_fees',      -- our fee revenue (system, sharded)
  'vat_payable'         -- VAT collected, owed to the tax authority (system, sharded)
);

create table private.ledger_accounts (
  id bigint generated always as identity primary key,
  kind private.account_kind not null,
  owner_id uuid,
  shard smallint not null default 0,
  currency text not null default 'NGN' check (currency = 'NGN'),
  balance bigint not null default 0,
  created_at timestamptz not null default now(),
  constraint ledger_accounts_owner check (
    (kind in ('user_wallet', 'escrow_hold') and owner_id is not null and shard = 0)
    or (kind not in ('user_wallet', 'escrow_hold') and owner_id is null)
  ),
  constraint ledger_accounts_non_negative check (
    kind not in ('user_wallet', 'escrow_hold') or balance >= 0
  )
);
create unique index ledger_accounts_owner_key on private.ledger_accounts (kind, owner_id) where owner_id is not null;
create unique index ledger_accounts_system_key on private.ledger_accounts (kind, shard) where owner_id is null;
alter table private.ledger_accounts enable row level security;

-- Shards of each system account. A posting takes the shard of its connection (pid modulo the
-- count), so 64 keeps two of a pool's connections on one row rare; raising it later only means
-- inserting rows.
insert into private.ledger_accounts (kind, shard)
select k::private.account_kind, s
from unnest(array['provider_clearing', 'platform_fees', 'vat_payable']) as k, generate_series(0, 63) as s;

create table private.ledger_transfers (
  id uuid primary key default gen_random_uuid(),
  idempotency_key text not null unique check (char_length(idempotency_key) between 1 and 200),
  kind text not null check (char_length(kind) between 1 and 50),
  transaction_id uuid,
  metadata jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index ledger_transfers_transaction_id_idx on private.ledger_transfers (transaction_id) where transaction_id is not null;
alter table private.ledger_transfers enable row level security;

create table private.ledger_entries (
  id bigint generated always as identity primary key,
  transfer_id uuid not null references private.ledger_transfers (id),
  account_id bigint not null references private.ledger_accounts (id),
  amount bigint not null check (amount <> 0),
  created_at timestamptz not null default now()
);
create index ledger_entries_transfer_id_idx on private.ledger_entries (transfer_id);
create index ledger_entries_account_id_idx on private.ledger_entries (account_id, id);
alter table private.ledger_entries enable row level security;

create function private.forbid_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception '% is append-only', tg_table_name using errcode = '42501';
end
$$;

create trigger ledger_transfers_immutable before update or delete on private.ledger_transfers
  for each row execute function private.forbid_change();
create trigger ledger_entries_immutable before update or delete on private.ledger_entries
  for each row execute function private.forbid_change();
create trigger ledger_transfers_no_truncate before truncate on private.ledger_transfers
  for each statement execute function private.forbid_change();
create trigger ledger_entries_no_truncate before truncate on private.ledger_entries
  for each statement execute function private.forbid_change();

-- The account of (kind, owner), created on first use.
create function private.owner_account(p_kind private.account_kind, p_owner uuid)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_id bigint;
begin
  select id into v_id from private.ledger_accounts where kind = p_kind and owner_id = p_owner;
  if v_id is null then
    insert into private.ledger_accounts (kind, owner_id) values (p_kind, p_owner)
    on conflict (kind, owner_id) where owner_id is not null do nothing
    returning id into v_id;
    if v_id is null then
      select id into v_id from private.ledger_accounts where kind = p_kind and owner_id = p_owner;
    end if;
  end if;
  return v_id;
end
$$;

-- One shard of a system account. The shard is picked by the backend process, so postings that
-- run at the same time on different connections (a pool) land on different rows instead of
-- queueing on one. Which shard takes a posting does not matter: the account's balance is the sum
-- of its shards, and replays are matched by account kind (see post_transfer).
create function private.system_account(p_kind private.account_kind)
returns bigint
language sql
stable
set search_path = ''
as $$
  select a.id from private.ledger_accounts a
   where a.kind = p_kind and a.owner_id is null
     and a.shard = pg_catalog.pg_backend_pid() % (
           select count(*) from private.ledger_accounts b where b.kind = p_kind and b.owner_id is null)
$$;

-- Posts one transfer: p_entries is a JSON array of {account_id, amount} or {system, amount}
-- (system = a system account kind; a shard is chosen here), amounts in kobo, signed, non-zero,
-- summing to zero, each account at most once. Idempotent on p_key: a second call with the same key
-- and the same entries returns the first transfer's id and changes nothing (system entries match
-- by kind, whatever shard took them); the same key with other entries is an error. Raises ES402
-- when a user wallet or escrow hold would go negative.
create function private.post_transfer(
  p_key text, p_kind text, p_entries jsonb, p_transaction_id uuid default null, p_metadata jsonb default '{}'::jsonb
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_transfer uuid;
  v_ids bigint[];
  v_amounts bigint[];
  v_count integer;
  v_updated integer;
begin
  select pg_catalog.array_agg(x.account_id order by x.account_id), pg_catalog.array_agg(x.amount order by x.account_id), count(*)
    into v_ids, v_amounts, v_count
    from (
      select coalesce((e ->> 'account_id')::bigint, private.system_account((e ->> 'system')::private.account_kind)) as account_id,
             (e ->> 'amount')::numeric as amount
        from pg_catalog.jsonb_array_elements(p_entries) as e
    ) x
   where x.amount <> 0 and x.amount = trunc(x.amount);
  if v_count is distinct from pg_catalog.jsonb_array_length(p_entries) or v_count < 2
     or (select sum(a) from unnest(v_amounts) a) <> 0
     or (select count(distinct i) from unnest(v_ids) i) <> v_count
     or pg_catalog.array_position(v_ids, null) is not null then
    raise exception 'a transfer needs two or more non-zero whole-kobo entries on distinct accounts summing to zero'
      using errcode = 'ES422';
  end if;

  -- Idempotency: the key is taken by inserting the transfer row; a concurrent twin waits on the
  -- unique index and then sees the committed row.
  insert into private.ledger_transfers (idempotency_key, kind, transaction_id, metadata)
  values (p_key, p_kind, p_transaction_id, coalesce(p_metadata, '{}'::jsonb))
  on conflict (idempotency_key) do nothing
  returning id into v_transfer;

  if v_transfer is null then
    select t.id into v_transfer from private.ledger_transfers t where t.idempotency_key = p_key;
    if (select pg_catalog.array_agg(case when a.owner_id is null then a.kind::text else a.id::text end || ':' || le.amount
                                    order by 1)
          from private.ledger_entries le join private.ledger_accounts a on a.id = le.account_id
         where le.transfer_id = v_transfer)
       is distinct from
       (select pg_catalog.array_agg(case when a.owner_id is null then a.kind::text else a.id::text end || ':' || u.amount
                                    order by 1)
          from unnest(v_ids, v_amounts) as u(id, amount) join private.ledger_accounts a on a.id = u.id) then
      raise exception 'idempotency key % was already used for a different transfer', p_key using errcode = 'ES409';
    end if;
    return v_transfer;
  end if;

  -- Lock every touched account in id order (the one global order: no deadlocks), then apply all
  -- entries at once. A guarded account (wallet, escrow hold) that would go negative refuses the
  -- whole transfer.
  perform 1 from private.ledger_accounts where id = any(v_ids) order by id for update;

  update private.ledger_accounts a set balance = a.balance + u.amount
    from unnest(v_ids, v_amounts) as u(id, amount)
   where a.id = u.id and (a.balance + u.amount >= 0 or a.kind not in ('user_wallet', 'escrow_hold'));
  get diagnostics v_updated = row_count;
  if v_updated <> v_count then
    if (select count(*) from private.ledger_accounts where id = any(v_ids)) < v_count then
      raise exception 'a ledger account of this transfer does not exist' using errcode = 'ES422';
    end if;
    raise exception 'insufficient funds' using errcode = 'ES402';
  end if;

  insert into private.ledger_entries (transfer_id, account_id, amount)
  select v_transfer, u.id, u.amount from unnest(v_ids, v_amounts) as u(id, amount);
  return v_transfer;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- User-facing transactions (the spec's Transaction)
-- ---------------------------------------------------------------------------------------------

-- For tables listed with a timestamp cursor: gives a new row a created_at strictly later than
-- every existing row with the same owner (TG_ARGV[0] names the owner column). Inserts for one
-- owner are serialised by a transaction-scoped advisory lock, so two rows can never tie.
-- Owner columns are uuids.
create function private.strictly_increasing_created_at()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_owner text := pg_catalog.to_jsonb(new) ->> tg_argv[0];
  v_last timestamptz;
begin
  perform pg_catalog.pg_advisory_xact_lock(
    pg_catalog.hashtextextended(tg_table_schema || '.' || tg_table_name || ':' || coalesce(v_owner, ''), 0));
  execute pg_catalog.format('select max(created_at) from %I.%I where %I = $1::uuid', tg_table_schema, tg_table_name, tg_argv[0])
    into v_last using v_owner;
  if v_last is not null and new.created_at <= v_last then
    new.created_at := v_last + interval '1 microsecond';
  end if;
  return new;
end
$$;

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
  description text not null default '',
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
  constraint transactions_completed check ((status = 'pending') = (completed_at is null))
);
-- transaction-list pages by created_at descending for one user, with the created_at of the last
-- row as the cursor. That is exact only if no two rows of a user share a created_at: the trigger
-- below makes each new row's created_at later than every earlier row of the same owner, and the
-- unique index proves it.
create unique index transactions_user_created_key on public.transactions (user_id, created_at desc);

create trigger transactions_created_at_increasing before insert on public.transactions
  for each row execute function private.strictly_increasing_created_at('user_id');
create index transactions_escrow_id_idx on public.transactions (escrow_id) where escrow_id is not null;
alter table public.transactions enable row level security;

alter table private.ledger_transfers
  add constraint ledger_transfers_transaction_fk foreign key (transaction_id) references public.transactions (id);

revoke all on public.transactions from anon, authenticated;
grant select on public.transactions to authenticated;
grant select, insert, update on public.transactions to service_role;

create policy "Users can read their own transactions"
  on public.transactions for select to authenticated
  using (user_id = (select auth.uid()));

-- ---------------------------------------------------------------------------------------------
-- Virtual accounts, saved cards, payout accounts
-- ---------------------------------------------------------------------------------------------

create table public.virtual_accounts (
  user_id uuid primary key references private.users (id) on delete cascade,
  status text not null check (status in ('pending', 'active', 'inactive')),
  account_number text,
  account_name text,
  bank_name text,
  provider text not null check (provider in ('paystack', 'sandbox')),
  provider_customer_code text,
  failure_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index virtual_accounts_account_number_key on public.virtual_accounts (account_number);
create index virtual_accounts_customer_code_idx on public.virtual_accounts (provider_customer_code);
alter table public.virtual_accounts enable row level security;
revoke all on public.virtual_accounts from anon, authenticated;
grant select on public.virtual_accounts to authenticated;
grant select, insert, update on public.virtual_accounts to service_role;
create policy "Users can read their own virtual account"
  on public.virtual_accounts for select to authenticated
  using (user_id = (select auth.uid()));

create table public.saved_cards (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  last4 text not null check (last4 ~ '^[0-9]{4}$'),
  brand text not null check (char_length(brand) between 1 and 50),
  exp_month text not null check (exp_month ~ '^(0?[1-9]|1[0-2])$'),
  exp_year text not null check (exp_year ~ '^[0-9]{2}([0-9]{2})?$'),
  bank text check (char_length(bank) <= 100),
  signature text not null check (char_length(signature) between 1 and 200),
  is_default boolean not null default false,
  created_at timestamptz not null default now(),
  unique (user_id, signature)
);
create unique index saved_cards_one_default on public.saved_cards (user_id) where is_default;
alter table public.saved_cards enable row level security;
revoke all on public.saved_cards from anon, authenticated;
grant select on public.saved_cards to authenticated;
grant select, insert, update, delete on public.saved_cards to service_role;
create policy "Users can read their own cards"
  on public.saved_cards for select to authenticated
  using (user_id = (select auth.uid()));

-- The provider's reusable authorization for a card: server-side only, never returned.
create table private.card_authorizations (
  card_id uuid primary key references public.saved_cards (id) on delete cascade,
  authorization_code text not null,
  created_at timestamptz not null default now()
);
alter table private.card_authorizations enable row level security;

create table public.payout_accounts (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  bank_name text not null check (char_length(bank_name) between 1 and 100),
  bank_code text not null check (bank_code ~ '^[0-9A-Za-z]{2,10}$'),
  account_number text not null check (account_number ~ '^[0-9]{10,20}$'),
  account_name text not null check (char_length(account_name) between 1 and 200),
  is_default boolean not null default false,
  verified boolean not null default false,
  provider_recipient_code text,
  created_at timestamptz not null default now(),
  unique (user_id, bank_code, account_number)
);
create unique index payout_accounts_one_default on public.payout_accounts (user_id) where is_default;
alter table public.payout_accounts enable row level security;
revoke all on public.payout_accounts from anon, authenticated;
grant select on public.payout_accounts to authenticated;
grant select, insert, update, delete on public.payout_accounts to service_role;
create policy "Users can read their own payout accounts"
  on public.payout_accounts for select to authenticated
  using (user_id = (select auth.uid()));

-- ---------------------------------------------------------------------------------------------
-- Webhook inbox, flags for review, idempotency keys
-- ---------------------------------------------------------------------------------------------

-- An event takes effect in the same transaction that inserts its inbox row, so a redelivered or
-- concurrent duplicate finds the row and has no second effect.
create table private.webhook_inbox (
  provider text not null,
  event_key text not null,
  event_type text not null,
  payload jsonb not null,
  outcome text not null,
  received_at timestamptz not null default now(),
  primary key (provider, event_key)
);
alter table private.webhook_inbox enable row level security;

-- Events whose processing failed: kept for operators; a redelivery is processed afresh.
create table private.webhook_failures (
  id bigint generated always as identity primary key,
  provider text not null,
  event_key text not null,
  event_type text not null,
  payload jsonb not null,
  error text not null,
  created_at timestamptz not null default now()
);
alter table private.webhook_failures enable row level security;

-- Money that arrived in a shape we did not expect (amount mismatch, unknown account, ...),
-- recorded for an operator instead of being guessed at.
create table private.payment_flags (
  id bigint generated always as identity primary key,
  reason text not null,
  transaction_id uuid references public.transactions (id),
  provider_reference text,
  expected_amount bigint,
  received_amount bigint,
  payload jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index payment_flags_transaction_id_idx on private.payment_flags (transaction_id);
alter table private.payment_flags enable row level security;

create table private.idempotency_keys (
  user_id uuid not null references private.users (id) on delete cascade,
  operation text not null,
  key text not null check (char_length(key) between 1 and 255),
  request_hash text not null,
  response_status integer,
  response_body text, -- the JSON exactly as first sent, replayed byte for byte
  created_at timestamptz not null default now(),
  primary key (user_id, operation, key)
);
create index idempotency_keys_created_at_idx on private.idempotency_keys (created_at);
alter table private.idempotency_keys enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Transitions: each one SQL function, one transaction, idempotent
-- ---------------------------------------------------------------------------------------------

-- A pending card top-up (new card or saved card). The charge reference is the transaction id.
create function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
begin
  if p_amount <= 0 then
    raise exception 'amount must be positive' using errcode = 'ES422';
  end if;
  insert into public.transactions (user_id, type, category, description, amount, direction, status, provider, metadata)
  values (p_user, 'wallet_topup', 'deposit',
          case when p_card_id is null then 'Wallet top-up by card' else 'Wallet top-up with a saved card' end,
          p_amount, 'in', 'pending', p_provider,
          case when p_card_id is null then '{}'::jsonb else pg_catalog.jsonb_build_object('card_id', p_card_id) end)
  returning id into v_tx;
  return v_tx;
end
$$;

-- Completes a pending top-up on charge.success. Credits what actually arrived: an amount other
-- than the pending one is credited as received and flagged for review, never as expected.
-- A charge for a top-up already failed or canceled is flagged, not credited.
-- Returns 'succeeded', 'already_done', 'flagged' or 'not_found'.
create function private.topup_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
begin
  select * into t from public.transactions where id = p_tx and type = 'wallet_topup' for update;
  if not found then
    return 'not_found';
  end if;
  if t.status in ('failed', 'canceled') then
    -- money arrived for a top-up we had already closed: not credited, but kept for an operator
    insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
    values ('charge_for_closed_transaction', t.id, t.id::text, t.amount, p_received, p_payload);
    return 'flagged';
  end if;
  if t.status <> 'pending' then
    return 'already_done';
  end if;
  if p_received <= 0 then
    raise exception 'received amount must be positive' using errcode = 'ES422';
  end if;
  if p_received <> t.amount then
    insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
    values ('amount_mismatch', t.id, t.id::text, t.amount, p_received, p_payload);
  end if;
  update public.transactions
     set status = 'succeeded', completed_at = now(), amount = p_received, provider_charge_id = p_charge_id,
         metadata = metadata || case when p_received <> t.amount
           then pg_catalog.jsonb_build_object('flag', 'amount_mismatch', 'expected_amount', t.amount, 'received_amount', p_received)
           else '{}'::jsonb end
   where id = t.id;
  perform private.post_transfer(
    'topup:' || t.id, 'wallet_topup',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -p_received),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', t.user_id), 'amount', p_received)),
    t.id);
  return 'succeeded';
end
$$;

-- A charge that failed: the pending top-up is marked failed (no ledger effect).
create function private.topup_fail(p_tx uuid, p_reason text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  update public.transactions
     set status = 'failed', completed_at = now(), metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', p_reason)
   where id = p_tx and type = 'wallet_topup' and status = 'pending';
  return case when found then 'failed' else 'already_done' end;
end
$$;

-- Money that arrived by bank transfer into a user's dedicated virtual account: a new, already
-- succeeded deposit, credited at once. Idempotent on the provider's charge id.
create function private.virtual_account_deposit(p_user uuid, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
begin
  if p_amount <= 0 then
    raise exception 'amount must be positive' using errcode = 'ES422';
  end if;
  select id into v_tx from public.transactions
   where provider_charge_id = p_charge_id and type = 'virtual_account_deposit' and user_id = p_user;
  if found then
    return v_tx;
  end if;
  insert into public.transactions (user_id, type, category, description, amount, direction, status, provider,
                                   provider_charge_id, metadata, completed_at)
  values (p_user, 'virtual_account_deposit', 'deposit', 'Bank transfer to your virtual account', p_amount, 'in',
          'succeeded', p_provider, p_charge_id, coalesce(p_metadata, '{}'::jsonb), now())
  returning id into v_tx;
  perform private.post_transfer(
    'va-deposit:' || p_charge_id, 'virtual_account_deposit',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_user), 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;
create index transactions_provider_charge_id_idx on public.transactions (provider_charge_id) where provider_charge_id is not null;

-- Starts a withdrawal: a pending transaction, and the amount leaves the wallet at once (to the
-- provider clearing account, where the payout transfer draws it). ES402 when the wallet is short.
create function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
  pa public.payout_accounts%rowtype;
begin
  if p_amount <= 0 then
    raise exception 'amount must be positive' using errcode = 'ES422';
  end if;
  select * into pa from public.payout_accounts where id = p_payout_account and user_id = p_user;
  if not found then
    raise exception 'payout account not found' using errcode = 'ES404';
  end if;
  insert into public.transactions (user_id, type, category, description, amount, direction, status, provider, metadata)
  values (p_user, 'withdrawal', 'withdrawal', 'Withdrawal to ' || pa.bank_name || ' ' || pg_catalog.right(pa.account_number, 4),
          p_amount, 'out', 'pending', p_provider,
          pg_catalog.jsonb_build_object('payout_account_id', pa.id, 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)))
  returning id into v_tx;
  perform private.post_transfer(
    'withdrawal:' || v_tx, 'withdrawal',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_user), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;

-- A payout transfer (withdrawal or escrow payout) succeeded. Returns 'succeeded', 'already_done'
-- or 'not_found'; a transfer that was already failed and reversed is not resurrected.
create function private.payout_succeed(p_tx uuid, p_transfer_code text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
begin
  select * into t from public.transactions where id = p_tx and type in ('withdrawal', 'escrow_payout') for update;
  if not found then
    return 'not_found';
  end if;
  if t.status <> 'pending' then
    return 'already_done';
  end if;
  update public.transactions
     set status = 'succeeded', completed_at = now(), provider_transfer_id = coalesce(p_transfer_code, provider_transfer_id)
   where id = t.id;
  return 'succeeded';
end
$$;

-- A payout transfer failed or was reversed: the transaction is marked failed and the deduction is
-- reversed into the wallet, exactly once (a later success or failure for it changes nothing).
-- A reversal after a success (transfer.reversed following transfer.success) also returns the money.
create function private.payout_fail(p_tx uuid, p_reason text, p_transfer_code text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
begin
  select * into t from public.transactions where id = p_tx and type in ('withdrawal', 'escrow_payout') for update;
  if not found then
    return 'not_found';
  end if;
  if t.status = 'failed' then
    return 'already_done';
  end if;
  update public.transactions
     set status = 'failed', completed_at = now(),
         provider_transfer_id = coalesce(p_transfer_code, provider_transfer_id),
         metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', p_reason,
                                                             'previous_status', t.status::text)
   where id = t.id;
  perform private.post_transfer(
    'payout-reversal:' || t.id, 'payout_reversal',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -t.amount),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', t.user_id), 'amount', t.amount)),
    t.id);
  return 'failed';
end
$$;

-- Saved cards: deduplicated by signature per user; the first card becomes the default.
create function private.card_add(
  p_user uuid, p_authorization_code text, p_last4 text, p_brand text, p_exp_month text, p_exp_year text,
  p_bank text, p_signature text
) returns table (card_id uuid, created boolean)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cards:' || p_user, 0));
  select c.id into v_id from public.saved_cards c where c.user_id = p_user and c.signature = p_signature;
  if found then
    -- the same card again: refresh its details and authorization, keep one row
    update public.saved_cards c
       set last4 = p_last4, brand = p_brand, exp_month = p_exp_month, exp_year = p_exp_year, bank = coalesce(p_bank, c.bank)
     where c.id = v_id;
    update private.card_authorizations ca set authorization_code = p_authorization_code where ca.card_id = v_id;
    return query select v_id, false;
    return;
  end if;
  insert into public.saved_cards (user_id, last4, brand, exp_month, exp_year, bank, signature, is_default)
  values (p_user, p_last4, p_brand, p_exp_month, p_exp_year, p_bank, p_signature,
          not exists (select 1 from public.saved_cards c where c.user_id = p_user))
  returning saved_cards.id into v_id;
  insert into private.card_authorizations (card_id, authorization_code) values (v_id, p_authorization_code);
  return query select v_id, true;
end
$$;

-- Removes a card; when it was the default, the newest remaining card becomes the default.
create function private.card_remove(p_user uuid, p_card uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  was_default boolean;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cards:' || p_user, 0));
  delete from public.saved_cards where id = p_card and user_id = p_user returning is_default into was_default;
  if not found then
    return false;
  end if;
  if was_default then
    update public.saved_cards set is_default = true
     where id = (select id from public.saved_cards where user_id = p_user order by created_at desc, id desc limit 1);
  end if;
  return true;
end
$$;

create function private.card_set_default(p_user uuid, p_card uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cards:' || p_user, 0));
  if not exists (select 1 from public.saved_cards where id = p_card and user_id = p_user) then
    return false;
  end if;
  update public.saved_cards set is_default = false where user_id = p_user and is_default and id <> p_card;
  update public.saved_cards set is_default = true where id = p_card;
  return true;
end
$$;

-- Payout accounts: one per (bank, number) per user; the first becomes the default.
create function private.payout_add(
  p_user uuid, p_bank_code text, p_bank_name text, p_account_number text, p_account_name text,
  p_verified boolean, p_recipient_code text
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('payouts:' || p_user, 0));
  insert into public.payout_accounts (user_id, bank_code, bank_name, account_number, account_name, verified,
                                      provider_recipient_code, is_default)
  values (p_user, p_bank_code, p_bank_name, p_account_number, p_account_name, p_verified, p_recipient_code,
          not exists (select 1 from public.payout_accounts where user_id = p_user))
  returning id into v_id;
  return v_id;
end
$$;

create function private.payout_remove(p_user uuid, p_account uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  was_default boolean;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('payouts:' || p_user, 0));
  delete from public.payout_accounts where id = p_account and user_id = p_user returning is_default into was_default;
  if not found then
    return false;
  end if;
  if was_default then
    update public.payout_accounts set is_default = true
     where id = (select id from public.payout_accounts where user_id = p_user order by created_at desc, id desc limit 1);
  end if;
  return true;
end
$$;

create function private.payout_set_default(p_user uuid, p_account uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('payouts:' || p_user, 0));
  if not exists (select 1 from public.payout_accounts where id = p_account and user_id = p_user) then
    return false;
  end if;
  update public.payout_accounts set is_default = false where user_id = p_user and is_default and id <> p_account;
  update public.payout_accounts set is_default = true where id = p_account;
  return true;
end
$$;

-- Balances of the system accounts (sum of their shards), for reports and the invariant checks.
create view private.system_balances with (security_invoker = true) as
  select kind, sum(balance)::bigint as balance, count(*) as shards
    from private.ledger_accounts where owner_id is null group by kind;

-- ---------------------------------------------------------------------------------------------
-- Grants and policies: internals reachable by service_role only
-- ---------------------------------------------------------------------------------------------

create policy "Service role manages ledger accounts" on private.ledger_accounts for all to service_role using (true) with check (true);
create policy "Service role manages ledger transfers" on private.ledger_transfers for all to service_role using (true) with check (true);
create policy "Service role manages ledger entries" on private.ledger_entries for all to service_role using (true) with check (true);
create policy "Service role manages card authorizations" on private.card_authorizations for all to service_role using (true) with check (true);
create policy "Service role manages webhook inbox" on private.webhook_inbox for all to service_role using (true) with check (true);
create policy "Service role manages webhook failures" on private.webhook_failures for all to service_role using (true) with check (true);
create policy "Service role manages payment flags" on private.payment_flags for all to service_role using (true) with check (true);
create policy "Service role manages idempotency keys" on private.idempotency_keys for all to service_role using (true) with check (true);
create policy "Service role manages transactions" on public.transactions for all to service_role using (true) with check (true);
create policy "Service role manages virtual accounts" on public.virtual_accounts for all to service_role using (true) with check (true);
create policy "Service role manages saved cards" on public.saved_cards for all to service_role using (true) with check (true);
create policy "Service role manages payout accounts" on public.payout_accounts for all to service_role using (true) with check (true);

grant select, insert, update, delete on all tables in schema private to service_role;
revoke update, delete, truncate on private.ledger_transfers, private.ledger_entries from service_role;
grant usage on type private.account_kind to service_role;

grant execute on function
  private.owner_account(private.account_kind, uuid),
  private.system_account(private.account_kind),
  private.post_transfer(text, text, jsonb, uuid, jsonb),
  private.topup_create(uuid, bigint, text, uuid),
  private.topup_succeed(uuid, bigint, text, jsonb),
  private.topup_fail(uuid, text),
  private.virtual_account_deposit(uuid, bigint, text, text, jsonb),
  private.withdrawal_create(uuid, bigint, uuid, text),
  private.payout_succeed(uuid, text),
  private.payout_fail(uuid, text, text),
  private.card_add(uuid, text, text, text, text, text, text, text),
  private.card_remove(uuid, uuid),
  private.card_set_default(uuid, uuid),
  private.payout_add(uuid, text, text, text, text, boolean, text),
  private.payout_remove(uuid, uuid),
  private.payout_set_default(uuid, uuid)
  to service_role;

revoke execute on all functions in schema private from public;
revoke execute on all functions in schema public from public, anon, authenticated;
