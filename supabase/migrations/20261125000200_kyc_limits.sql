-- =============================================================================================
-- KYC limits where money is asked to move (DESIGN §8.4, docs/kyc.md)
--
-- Each function that creates a movement into or out of the service checks the user's tier limits
-- first (private.kyc_limit_check), in its own transaction, under the per-user lock the check
-- takes: a wallet top-up, a withdrawal, and an escrow's funding by card, by bank transfer or from
-- the wallet. Money that arrives (a charge's webhook, a bank transfer, a release, a refund, a
-- settlement) is never refused; a bank transfer that takes the wallet above the balance limit is
-- credited and the user told to verify (private.kyc_balance_notice).
-- =============================================================================================

-- =============================================================================================
-- Wallet: top-up and withdrawal
-- =============================================================================================

create or replace function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid)
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
  perform private.kyc_limit_check(p_user, p_amount, 'topup', 'amount');
  insert into public.transactions (user_id, type, category, message, amount, direction, status, provider, metadata)
  values (p_user, 'wallet_topup', 'deposit',
          pg_catalog.jsonb_build_object('kind', case when p_card_id is null then 'wallet_topup'
                                                     else 'wallet_topup_saved_card' end),
          p_amount, 'in', 'pending', p_provider,
          case when p_card_id is null then '{}'::jsonb else pg_catalog.jsonb_build_object('card_id', p_card_id) end)
  returning id into v_tx;
  return v_tx;
end
$$;
comment on function private.topup_create(uuid, bigint, text, uuid) is
  'wallet-topup: a pending card top-up transaction, whose id is the charge reference, within the user''s KYC limits '
  '(ES403 otherwise).';

create or replace function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text)
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
  perform private.kyc_limit_check(p_user, p_amount, 'withdrawal', 'amount');
  insert into public.transactions (user_id, type, category, message, amount, direction, status, provider, metadata)
  values (p_user, 'withdrawal', 'withdrawal',
          pg_catalog.jsonb_build_object('kind', 'withdrawal', 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)),
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
comment on function private.withdrawal_create(uuid, bigint, uuid, text) is
  'wallet-withdraw: a pending withdrawal within the user''s KYC limits (ES403 otherwise); the amount leaves the wallet '
  'at once for the payout transfer (ES402 when short).';

-- =============================================================================================
-- Escrow funding: by card, by bank transfer, from the wallet
-- =============================================================================================

create or replace function private.escrow_charge_create(p_escrow uuid, p_actor uuid, p_provider text, p_method text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_tx uuid;
begin
  perform private.escrow_fundable(e, p_actor);
  perform private.kyc_limit_check(p_actor, e.total_charge, 'escrow_charge', 'escrow_id');
  -- the payment request of an accepted escrow, not yet used as a charge reference, becomes this
  -- charge's reference (a reference is used once: a later attempt gets a transaction of its own)
  select id into v_tx from public.transactions
   where escrow_id = e.id and user_id = p_actor and type = 'escrow_funding' and status = 'pending'
     and metadata ? 'payment_request' and not metadata ? 'kind'
   order by created_at limit 1;
  if v_tx is not null then
    update public.transactions
       set provider = p_provider, metadata = metadata || pg_catalog.jsonb_build_object('method', p_method, 'kind', 'escrow_charge')
     where id = v_tx;
    return v_tx;
  end if;
  return private.escrow_transaction(p_actor, e.id, null, 'escrow_funding',
           pg_catalog.jsonb_build_object('kind', 'escrow_funding', 'title', e.title), e.total_charge, 'out',
           p_provider, 'pending',
           pg_catalog.jsonb_build_object('method', p_method, 'kind', 'escrow_charge', 'amount', e.amount,
                                         'payer_fee', e.payer_fee, 'vat', e.vat));
end
$$;
comment on function private.escrow_charge_create(uuid, uuid, text, text) is
  'escrow-fund by card: the pending funding transaction (the payment request, if any) whose id is the charge '
  'reference, within the payer''s KYC limits (ES403 otherwise).';

create or replace function private.escrow_await_bank_transfer(p_escrow uuid, p_actor uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  perform private.escrow_fundable(e, p_actor);
  perform private.kyc_limit_check(p_actor, e.total_charge, 'escrow_transfer', 'escrow_id');
  update public.escrows set awaiting_bank_transfer_at = now(), updated_at = now() where id = e.id;
end
$$;
comment on function private.escrow_await_bank_transfer(uuid, uuid) is
  'escrow-fund by bank transfer: within the payer''s KYC limits (ES403 otherwise), marks the escrow as waiting for '
  'money in the payer''s virtual account.';

create function private.escrow_fund_wallet_request(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  perform private.escrow_fundable(e, p_actor);
  -- the single limit only: the wallet's money was counted toward the day when it came in
  perform private.kyc_limit_check(p_actor, e.total_charge, 'escrow_wallet', 'escrow_id');
  return private.escrow_fund_wallet(e.id, p_actor);
end
$$;
comment on function private.escrow_fund_wallet_request(uuid, uuid) is
  'escrow-fund from the wallet, as the payer asks it: within the payer''s single KYC limit (ES403 otherwise), then '
  'private.escrow_fund_wallet. (A bank transfer that arrives for a waiting escrow funds it without a second check: '
  'the request was checked.)';
revoke execute on function private.escrow_fund_wallet_request(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_fund_wallet_request(uuid, uuid) to service_role;

-- =============================================================================================
-- Bank transfers in: credited whatever the tier, the user told when above the balance limit
-- =============================================================================================

create or replace function private.bank_transfer_received(
  p_user uuid, p_received bigint, p_provider text, p_charge_id text, p_metadata jsonb
) returns text
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  e public.escrows;
  v_balance bigint;
  v_phone text;
  v_outcome text;
begin
  if exists (select 1 from public.transactions
              where provider_charge_id = p_charge_id and type = 'virtual_account_deposit' and user_id = p_user) then
    return 'already_done';
  end if;
  select id into v_id from public.escrows w
   where awaiting_bank_transfer_at is not null
     and private.escrow_is_fundable(w)
     and p_user = case when payer_role = 'initiator' then initiator_id else counterparty_id end
   order by awaiting_bank_transfer_at, id limit 1
   for update;
  perform private.virtual_account_deposit(p_user, p_received, p_provider, p_charge_id, p_metadata);
  if v_id is null then
    v_outcome := 'deposit';
  else
    select * into e from public.escrows where id = v_id;
    select balance into v_balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user;
    if coalesce(v_balance, 0) >= e.total_charge then
      v_outcome := 'deposit:escrow:' || private.escrow_fund_wallet(e.id, p_user);
    else
      select phone into v_phone from private.users where id = p_user;
      perform private.queue_sms(v_phone, pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
        'received', p_received, 'category', e.category, 'total_charge', e.total_charge,
        'shortfall', e.total_charge - coalesce(v_balance, 0)));
      perform private.notify(p_user, e.id, 'funding_shortfall', pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
        'title', e.title, 'received', p_received, 'shortfall', e.total_charge - coalesce(v_balance, 0)),
        'escrow', e.id, 'Fund escrow');
      v_outcome := 'deposit:shortfall';
    end if;
  end if;
  perform private.kyc_balance_notice(p_user);
  return v_outcome;
end
$$;
comment on function private.bank_transfer_received(uuid, bigint, text, text, jsonb) is
  'A bank transfer into a virtual account: credits the wallet once (whatever the KYC tier), funds the oldest waiting '
  'escrow when covered, else tells the payer the shortfall; above the balance limit the user is told to verify.';
