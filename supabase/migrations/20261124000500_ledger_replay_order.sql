-- =============================================================================================
-- Ledger: the idempotent replay of private.post_transfer compares entries in a fixed order.
--
-- A second posting with a key already used must find the same entries as the first. The two
-- entry lists were compared as arrays built with `array_agg(... order by 1)`, and inside an
-- aggregate `order by 1` sorts by the constant 1, not by the first column: the elements came in
-- whatever order the rows were read, so an identical replay could be refused as "a different
-- transfer" (seen once under load, in the test that posts one key 20 times at once). Both arrays
-- are now sorted by the element itself. Nothing else changes; CREATE OR REPLACE keeps the
-- function's privileges (service_role only).
-- =============================================================================================

create or replace function private.post_transfer(
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
                                    order by case when a.owner_id is null then a.kind::text else a.id::text end
                                             || ':' || le.amount)
          from private.ledger_entries le join private.ledger_accounts a on a.id = le.account_id
         where le.transfer_id = v_transfer)
       is distinct from
       (select pg_catalog.array_agg(case when a.owner_id is null then a.kind::text else a.id::text end || ':' || u.amount
                                    order by case when a.owner_id is null then a.kind::text else a.id::text end
                                             || ':' || u.amount)
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
