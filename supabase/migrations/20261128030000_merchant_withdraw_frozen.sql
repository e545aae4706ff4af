-- =============================================================================================
-- A frozen merchant's wallet stays where it is
-- =============================================================================================
-- A frozen merchant's keys stop working and its owner can make no key or endpoint, but
-- merchant-withdraw still paid its wallet out. private.merchant_withdraw_create is restated to
-- refuse a merchant that is not active (403 merchant_frozen), reading its status under a lock on
-- its row; nothing else in it changes.

create or replace function private.merchant_withdraw_create(p_owner uuid, p_merchant uuid, p_amount bigint,
                                                 p_payout_account uuid, p_provider text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
  v_ref uuid := private.idempotency_reference();
  v_name text;
  v_status text;
  v_balance bigint;
  pa public.payout_accounts%rowtype;
begin
  select id into v_tx from public.transactions
   where id = v_ref and user_id = p_owner and merchant_id = p_merchant and type = 'withdrawal';
  if found then
    return v_tx;
  end if;
  if p_amount <= 0 then
    -- an assertion: the endpoint validated the amount
    raise exception 'amount must be positive';
  end if;
  -- the merchant's row, locked: a freeze waits for this withdrawal, or this one sees the freeze
  select m.name, m.status into v_name, v_status from private.merchants m
   where m.id = p_merchant and m.owner_id = p_owner for share;
  if not found then
    perform private.refuse(404, 'merchant_not_found', '{}'::jsonb);
  end if;
  if v_status <> 'active' then
    perform private.refuse(403, 'merchant_frozen', '{}'::jsonb);
  end if;
  select * into pa from public.payout_accounts where id = p_payout_account and user_id = p_owner;
  if not found then
    perform private.refuse(404, 'payout_account_not_found', pg_catalog.jsonb_build_object(
      'field', 'payout_account_id', 'payout_account_id', p_payout_account));
  end if;
  perform private.kyc_limit_check(p_owner, p_amount, 'withdrawal', 'amount');
  insert into public.transactions (id, user_id, merchant_id, type, category, message, amount, direction, status,
                                   provider, metadata)
  values (v_ref, p_owner, p_merchant, 'withdrawal', 'withdrawal',
          pg_catalog.jsonb_build_object('kind', 'merchant_withdrawal', 'merchant', v_name, 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)),
          p_amount, 'out', 'pending', p_provider,
          pg_catalog.jsonb_build_object('payout_account_id', pa.id, 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)))
  returning id into v_tx;
  -- the merchant's wallet, locked: a merchant wallet has no guard in the ledger's posting but its
  -- CHECK, so the balance is compared here, under the lock
  select balance into v_balance from private.ledger_accounts
   where id = private.owner_account('merchant_wallet', p_merchant) for update;
  if v_balance < p_amount then
    perform private.refuse(409, 'insufficient_funds', pg_catalog.jsonb_build_object(
      'field', 'amount', 'balance', v_balance, 'amount', p_amount));
  end if;
  perform private.post_transfer(
    'withdrawal:' || v_tx, 'merchant_withdrawal',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('merchant_wallet', p_merchant), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;
comment on function private.merchant_withdraw_create(uuid, uuid, bigint, uuid, text) is
  'merchant-withdraw: a pending withdrawal of the merchant''s wallet to one of its owner''s payout accounts (payout_account_not_found), while the merchant is active (merchant_frozen), within the owner''s KYC limits (kyc_tier_required, kyc_limit_exceeded), under the Idempotency-Key''s reference; the amount leaves the merchant''s wallet at once (insufficient_funds, facts {field, balance, amount}, when short).';
revoke all on function private.merchant_withdraw_create(uuid, uuid, bigint, uuid, text) from public;
grant execute on function private.merchant_withdraw_create(uuid, uuid, bigint, uuid, text) to service_role;
