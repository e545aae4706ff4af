-- =============================================================================================
-- Refusal facts: money and KYC (docs/errors.md#refusals-raised-in-sql)
--
-- The functions of the money and KYC areas that refused with English now refuse through
-- private.refuse with a code and its facts; the endpoint words them (shared/money/refusals.ts,
-- shared/kyc/refusals.ts). A withdrawal above the wallet balance is insufficient_funds (409) with
-- the balance and the amount. Checks no request can fail (amounts are validated before) are
-- assertions without a refusal's SQLSTATE.
-- =============================================================================================

create or replace function private.kyc_check_may_start(p_user uuid, p_check text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if exists (select 1 from private.kyc_checks where user_id = p_user and check_type = p_check and status = 'passed') then
    perform private.refuse(409, 'kyc_check_passed', pg_catalog.jsonb_build_object('check', p_check));
  end if;
  if exists (select 1 from private.kyc_checks
              where user_id = p_user and check_type = p_check and status = 'failed' and reject_type = 'FINAL') then
    perform private.refuse(409, 'kyc_check_rejected', pg_catalog.jsonb_build_object('check', p_check, 'seen_by', 'service'));
  end if;
end
$$;
comment on function private.kyc_check_may_start(p_user uuid, p_check text) is
  'Refuses to start a check the user has passed (kyc_check_passed), or that was rejected with FINAL (kyc_check_rejected); facts {check}.';
revoke all on function private.kyc_check_may_start(p_user uuid, p_check text) from public;
grant execute on function private.kyc_check_may_start(p_user uuid, p_check text) to service_role;

create or replace function private.kyc_floor_check(p_user uuid, p_action text, p_field text)
returns void
language plpgsql
stable
set search_path = ''
as $$
declare
  v_required smallint := private.kyc_floor_tier(p_user);
begin
  if p_action not in ('topup', 'withdrawal', 'escrow_charge', 'escrow_transfer', 'escrow_wallet',
                      'virtual_account', 'card') then
    raise exception 'unknown action %', p_action;
  end if;
  if v_required is null then
    return;
  end if;
  -- worded by the endpoint (shared/kyc/refusals.ts KYC_TIER_REQUIRED)
  perform private.refuse(403, 'kyc_tier_required', pg_catalog.jsonb_build_object(
    'action', p_action, 'field', p_field,
    'tier', (select kyc_tier from private.users where id = p_user), 'required_tier', v_required));
end
$$;
comment on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) is
  'Refuses (kyc_tier_required, facts {action, field, tier, required_tier}) an action that moves money, or prepares to, while the user''s tier moves none.';
revoke all on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) from public;
grant execute on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) to service_role;

create or replace function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_tier smallint;
  l private.kyc_tiers%rowtype;
  v_daily boolean := p_movement <> 'escrow_wallet';
  v_used bigint := 0;
  v_balance bigint := 0;
  v_limit text;
  v_allowed smallint;
begin
  if p_movement not in ('topup', 'withdrawal', 'escrow_charge', 'escrow_transfer', 'escrow_wallet') then
    raise exception 'unknown movement %', p_movement;
  end if;
  perform private.kyc_floor_check(p_user, p_movement, p_field);
  -- requests of one user one at a time, until commit: the movement this request creates is
  -- counted by the next one (every caller creates it in the same transaction)
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('kyc-limit:' || p_user::text, 0));
  select kyc_tier into v_tier from private.users where id = p_user;
  select * into l from private.kyc_tiers where tier = coalesce(v_tier, 0);
  if v_daily then
    v_used := private.kyc_used_today(p_user, now());
  end if;
  if p_movement = 'topup' then
    select coalesce((select balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user), 0)
         + coalesce((select sum(amount) from public.transactions
                      where user_id = p_user and type = 'wallet_topup' and status = 'pending'), 0)
      into v_balance;
  end if;

  if p_amount > l.single_limit then
    v_limit := 'single';
  elsif v_daily and v_used + p_amount > l.daily_limit then
    v_limit := 'daily';
  elsif p_movement = 'topup' and l.balance_limit is not null and v_balance + p_amount > l.balance_limit then
    v_limit := 'balance';
  else
    return;
  end if;

  select min(t.tier) into v_allowed from private.kyc_tiers t
   where t.tier > l.tier
     and t.single_limit >= p_amount
     and (not v_daily or t.daily_limit >= v_used + p_amount)
     and (p_movement <> 'topup' or t.balance_limit is null or t.balance_limit >= v_balance + p_amount);
  -- worded by the endpoint (shared/kyc/refusals.ts KYC_LIMIT_EXCEEDED)
  perform private.refuse(403, 'kyc_limit_exceeded', pg_catalog.jsonb_build_object(
    'kyc_limit', v_limit, 'field', p_field, 'movement', p_movement, 'tier', l.tier, 'amount', p_amount,
    'limit', case v_limit when 'single' then l.single_limit when 'daily' then l.daily_limit else l.balance_limit end,
    'used_today', v_used, 'balance', v_balance, 'allowed_tier', v_allowed));
end
$$;
comment on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) is
  'Refuses a movement below the identity floor (kyc_floor_check: kyc_tier_required) or over the user''s tier limits (kyc_limit_exceeded, facts {kyc_limit, field, movement, tier, amount, limit, used_today, balance, allowed_tier}): single, daily (not for a wallet funding) and, for a top-up, the balance. Serialised per user until commit.';
revoke all on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) from public;
grant execute on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) to service_role;

create or replace function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
begin
  if p_amount <= 0 then
    -- an assertion: the endpoint validated the amount
    raise exception 'amount must be positive';
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
comment on function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid) is
  'wallet-topup: a pending card top-up transaction, whose id is the charge reference, within the user''s KYC limits (kyc_tier_required, kyc_limit_exceeded otherwise).';
revoke all on function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid) from public;
grant execute on function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid) to service_role;

create or replace function private.virtual_account_deposit(p_user uuid, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
begin
  if p_amount <= 0 then
    -- an assertion: the webhook passes only amounts received
    raise exception 'amount must be positive';
  end if;
  select id into v_tx from public.transactions
   where provider_charge_id = p_charge_id and type = 'virtual_account_deposit' and user_id = p_user;
  if found then
    return v_tx;
  end if;
  insert into public.transactions (user_id, type, category, message, amount, direction, status, provider,
                                   provider_charge_id, metadata, completed_at)
  values (p_user, 'virtual_account_deposit', 'deposit',
          pg_catalog.jsonb_build_object('kind', 'virtual_account_deposit'),
          p_amount, 'in', 'succeeded', p_provider, p_charge_id, coalesce(p_metadata, '{}'::jsonb), now())
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
comment on function private.virtual_account_deposit(p_user uuid, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb) is
  'Credits a bank transfer into a user''s virtual account to their wallet as a settled deposit, once per provider charge id.';
revoke all on function private.virtual_account_deposit(p_user uuid, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb) from public;
grant execute on function private.virtual_account_deposit(p_user uuid, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb) to service_role;

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
    -- an assertion: the endpoint validated the amount
    raise exception 'amount must be positive';
  end if;
  select * into pa from public.payout_accounts where id = p_payout_account and user_id = p_user;
  if not found then
    perform private.refuse(404, 'payout_account_not_found', pg_catalog.jsonb_build_object(
      'field', 'payout_account_id', 'payout_account_id', p_payout_account));
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
  begin
    perform private.post_transfer(
      'withdrawal:' || v_tx, 'withdrawal',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_user), 'amount', -p_amount),
        pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', p_amount)),
      v_tx);
  exception when sqlstate 'ES402' then
    -- the wallet holds less than the amount (the ledger's guard): the refusal with its facts
    perform private.refuse(409, 'insufficient_funds', pg_catalog.jsonb_build_object(
      'field', 'amount', 'balance', private.wallet_balance(p_user), 'amount', p_amount));
  end;
  return v_tx;
end
$$;
comment on function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text) is
  'wallet-withdraw: a pending withdrawal within the user''s KYC limits (kyc_tier_required, kyc_limit_exceeded otherwise) to one of their payout accounts (payout_account_not_found); the amount leaves the wallet at once for the payout transfer (insufficient_funds, facts {field, balance, amount}, when short).';
revoke all on function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text) from public;
grant execute on function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text) to service_role;
