-- =============================================================================================
-- Ledger: double-entry accounts, transfers and entries, and the one function that posts a
-- transfer (private.post_transfer). Private: only service_role, through the functions of the
-- wallet and escrow areas. docs/money.md describes it.
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
-- =============================================================================================

-- =============================================================================================
-- Accounts
-- =============================================================================================

create type private.account_kind as enum (
  'user_wallet',        -- a user's spendable money (owner_id = user)
  'escrow_hold',        -- money locked in one escrow (owner_id = escrow)
  'provider_clearing',  -- money held for us by the payments provider (system, sharded)
  'platform_fees',      -- our fee revenue (system, sharded)
  'vat_payable'         -- VAT collected, owed to the tax authority (system, sharded)
);
grant usage on type private.account_kind to service_role;

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
comment on table private.ledger_accounts is
  'Double-entry ledger accounts: user wallets, escrow holds and the sharded system accounts, with balances.';
create unique index ledger_accounts_owner_key on private.ledger_accounts (kind, owner_id) where owner_id is not null;
create unique index ledger_accounts_system_key on private.ledger_accounts (kind, shard) where owner_id is null;
alter table private.ledger_accounts enable row level security;
create policy "Service role manages ledger accounts" on private.ledger_accounts
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.ledger_accounts to service_role;

-- Shards of each system account. A posting takes the shard of its connection (pid modulo the
-- count), so 64 keeps two of a pool's connections on one row rare; raising it later only means
-- inserting rows.
insert into private.ledger_accounts (kind, shard)
select k::private.account_kind, s
from unnest(array['provider_clearing', 'platform_fees', 'vat_payable']) as k, generate_series(0, 63) as s;

-- Balances of the system accounts (sum of their shards), for reports and the invariant checks.
create view private.system_balances with (security_invoker = true) as
  select kind, sum(balance)::bigint as balance, count(*) as shards
    from private.ledger_accounts where owner_id is null group by kind;
grant select, insert, update, delete on private.system_balances to service_role;

-- =============================================================================================
-- Transfers and entries: append-only
-- =============================================================================================

create table private.ledger_transfers (
  id uuid primary key default gen_random_uuid(),
  idempotency_key text not null unique check (char_length(idempotency_key) between 1 and 200),
  kind text not null check (char_length(kind) between 1 and 50),
  transaction_id uuid,
  metadata jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  constraint ledger_transfers_transaction_fk foreign key (transaction_id) references public.transactions (id)
);
comment on table private.ledger_transfers is
  'One balanced posting of the ledger, idempotent on its key, naming its transaction; append-only.';
create index ledger_transfers_transaction_id_idx on private.ledger_transfers (transaction_id)
  where transaction_id is not null;
alter table private.ledger_transfers enable row level security;
create policy "Service role manages ledger transfers" on private.ledger_transfers
  for all to service_role using (true) with check (true);
-- append-only, for service_role too: it reads and inserts, never updates or deletes
grant select, insert on private.ledger_transfers to service_role;

create table private.ledger_entries (
  id bigint generated always as identity primary key,
  transfer_id uuid not null references private.ledger_transfers (id),
  account_id bigint not null references private.ledger_accounts (id),
  amount bigint not null check (amount <> 0),
  created_at timestamptz not null default now()
);
comment on table private.ledger_entries is
  'The signed amounts of each ledger transfer, one per account; they sum to zero per transfer. Append-only.';
create index ledger_entries_transfer_id_idx on private.ledger_entries (transfer_id);
create index ledger_entries_account_id_idx on private.ledger_entries (account_id, id);
alter table private.ledger_entries enable row level security;
create policy "Service role manages ledger entries" on private.ledger_entries
  for all to service_role using (true) with check (true);
grant select, insert on private.ledger_entries to service_role;

-- Even the table owner cannot change or remove what was posted.
create function private.forbid_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception '% is append-only', tg_table_name using errcode = '42501';
end
$$;
comment on function private.forbid_change() is
  'Trigger: refuses UPDATE, DELETE and TRUNCATE on the append-only ledger tables, even for their owner (42501).';
revoke execute on function private.forbid_change() from public, anon, authenticated;

create trigger ledger_transfers_immutable before update or delete on private.ledger_transfers
  for each row execute function private.forbid_change();
create trigger ledger_entries_immutable before update or delete on private.ledger_entries
  for each row execute function private.forbid_change();
create trigger ledger_transfers_no_truncate before truncate on private.ledger_transfers
  for each statement execute function private.forbid_change();
create trigger ledger_entries_no_truncate before truncate on private.ledger_entries
  for each statement execute function private.forbid_change();

-- =============================================================================================
-- Posting
-- =============================================================================================

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
comment on function private.owner_account(private.account_kind, uuid) is
  'The ledger account of (kind, owner): a user''s wallet or an escrow''s hold, created on first use.';
revoke execute on function private.owner_account(private.account_kind, uuid) from public, anon, authenticated;
grant execute on function private.owner_account(private.account_kind, uuid) to service_role;

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
comment on function private.system_account(private.account_kind) is
  'The shard of a system ledger account that this database connection posts to.';
revoke execute on function private.system_account(private.account_kind) from public, anon, authenticated;
grant execute on function private.system_account(private.account_kind) to service_role;

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
comment on function private.post_transfer(text, text, jsonb, uuid, jsonb) is
  'Posts one balanced ledger transfer atomically and idempotently on its key; ES402 when a wallet or hold would go '
  'negative.';
revoke execute on function private.post_transfer(text, text, jsonb, uuid, jsonb) from public, anon, authenticated;
grant execute on function private.post_transfer(text, text, jsonb, uuid, jsonb) to service_role;
