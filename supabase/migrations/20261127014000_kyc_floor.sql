-- =============================================================================================
-- The identity floor (docs/compliance.md, docs/kyc.md#the-identity-floor)
--
-- No money moves into or out of the service through an account whose identity was not checked
-- against the NIN or BVN databases. Tier 0 (phone only) has single, daily and balance limits of 0,
-- and a tier whose single limit is 0 is "below the floor": a top-up, an escrow funding (any
-- method), a withdrawal, a virtual account and a saved card are refused with the facts of
-- kyc_tier_required, naming the lowest tier that lets money move. Such an account may still sign
-- up, talk, create and accept escrows, and receive money: a release or a settlement is credited to
-- its wallet and no payout starts, a bank transfer that still arrives is credited, and the user is
-- told which tier lets the money out (at most once a Lagos day). The limits stay rows of
-- private.kyc_tiers, which an operator may change.
-- =============================================================================================

-- =============================================================================================
-- Tier 0 moves nothing
-- =============================================================================================

alter table private.kyc_tiers drop constraint kyc_tiers_single_limit_check;
alter table private.kyc_tiers drop constraint kyc_tiers_daily_limit_check;
alter table private.kyc_tiers drop constraint kyc_tiers_balance_limit_check;
alter table private.kyc_tiers add constraint kyc_tiers_single_limit_check check (single_limit >= 0);
alter table private.kyc_tiers add constraint kyc_tiers_daily_limit_check check (daily_limit >= 0);
alter table private.kyc_tiers add constraint kyc_tiers_balance_limit_check check (balance_limit >= 0);

update private.kyc_tiers set single_limit = 0, daily_limit = 0, balance_limit = 0 where tier = 0;

comment on table private.kyc_tiers is
  'KYC tiers 0-4: the checks each adds and its limits in kobo (single, daily since 00:00 Africa/Lagos, wallet balance; null = none). A tier whose single limit is 0 moves no money (the identity floor; tier 0 by default). Operators may change the limits.';

-- =============================================================================================
-- Below the floor: the tier a user needs, and the refusal
-- =============================================================================================

create function private.kyc_floor_tier(p_user uuid)
returns smallint
language sql
stable
set search_path = ''
as $$
  select case when l.single_limit > 0 then null
              else coalesce((select min(t.tier) from private.kyc_tiers t where t.tier > l.tier and t.single_limit > 0),
                            4::smallint)
         end
    from private.users u
    join private.kyc_tiers l on l.tier = u.kyc_tier
   where u.id = p_user;
$$;
comment on function private.kyc_floor_tier(p_user uuid) is
  'Null when the user''s tier lets money move (its single limit is above 0); else the lowest tier that does.';
revoke all on function private.kyc_floor_tier(p_user uuid) from public;
grant execute on function private.kyc_floor_tier(p_user uuid) to service_role;

create function private.kyc_floor_check(p_user uuid, p_action text, p_field text)
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
  -- the refusal's facts, for the message the API writes (shared/kyc/tiers.ts tierRequiredRefusal)
  raise exception 'kyc tier required' using errcode = 'ES403', detail = pg_catalog.jsonb_build_object(
    'code', 'kyc_tier_required', 'action', p_action, 'field', p_field,
    'tier', (select kyc_tier from private.users where id = p_user), 'required_tier', v_required)::text;
end
$$;
comment on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) is
  'Refuses (ES403, facts {code: kyc_tier_required, action, field, tier, required_tier} in DETAIL) an action that moves money, or prepares to, while the user''s tier moves none.';
revoke all on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) from public;
grant execute on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) to service_role;

-- =============================================================================================
-- Where money is asked to move: the limit check refuses below the floor first
-- =============================================================================================

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
  -- the refusal's facts, for the message the API writes (shared/kyc/tiers.ts limitRefusal)
  raise exception 'over the KYC tier limit' using errcode = 'ES403', detail = pg_catalog.jsonb_build_object(
    'kyc_limit', v_limit, 'field', p_field, 'movement', p_movement, 'tier', l.tier, 'amount', p_amount,
    'limit', case v_limit when 'single' then l.single_limit when 'daily' then l.daily_limit else l.balance_limit end,
    'used_today', v_used, 'balance', v_balance, 'allowed_tier', v_allowed)::text;
end
$$;
comment on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) is
  'Refuses (ES403, the facts as JSON in DETAIL) a movement below the identity floor (kyc_floor_check) or over the user''s tier limits: single, daily (not for a wallet funding) and, for a top-up, the balance. Serialised per user until commit.';
revoke all on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) from public;
grant execute on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) to service_role;

-- =============================================================================================
-- A saved card is a way to pay: refused below the floor
-- =============================================================================================

create or replace function private.card_add(p_user uuid, p_authorization_code text, p_last4 text, p_brand text,
                                            p_exp_month text, p_exp_year text, p_bank text, p_signature text)
returns table (card_id uuid, created boolean)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
begin
  perform private.kyc_floor_check(p_user, 'card', 'kyc_tier');
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
comment on function private.card_add(uuid, text, text, text, text, text, text, text) is
  'Saves a card (deduplicated by signature per user, the first becomes the default) with its provider authorization; refused below the identity floor (kyc_tier_required).';
revoke all on function private.card_add(uuid, text, text, text, text, text, text, text) from public;
grant execute on function private.card_add(uuid, text, text, text, text, text, text, text) to service_role;

-- =============================================================================================
-- Money that arrives below the floor: credited, held, and the user told which tier lets it out
-- =============================================================================================

create or replace function private.kyc_balance_notice(p_user uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  l private.kyc_tiers%rowtype;
  v_required smallint := private.kyc_floor_tier(p_user);
  v_balance bigint;
  v_phone text;
begin
  select t.* into l from private.kyc_tiers t join private.users u on u.kyc_tier = t.tier where u.id = p_user;
  if not found then
    return;
  end if;
  select coalesce(balance, 0) into v_balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user;
  v_balance := coalesce(v_balance, 0);
  if v_required is null and (l.balance_limit is null or v_balance <= l.balance_limit) then
    return;
  end if;
  if v_balance <= 0 then
    return;
  end if;
  -- once a day (Lagos) is enough
  if exists (select 1 from public.notifications
              where user_id = p_user and event_type = 'verification_needed' and escrow_id is null
                and created_at >= private.lagos_day_start(now())) then
    return;
  end if;
  select phone into v_phone from private.users where id = p_user;
  if v_required is not null then
    perform private.notify_account(p_user, 'verification_needed',
      pg_catalog.jsonb_build_object('kind', 'verify_to_move_money', 'tier', v_required, 'balance', v_balance),
      'Verify identity');
    perform private.queue_sms(v_phone,
      pg_catalog.jsonb_build_object('kind', 'verify_to_move_money', 'tier', v_required, 'balance', v_balance));
    return;
  end if;
  perform private.notify_account(p_user, 'verification_needed',
    pg_catalog.jsonb_build_object('kind', 'verification_needed', 'tier', l.tier, 'balance', v_balance,
                                  'limit', l.balance_limit),
    'Verify identity');
  perform private.queue_sms(v_phone,
    pg_catalog.jsonb_build_object('kind', 'verification_needed', 'tier', l.tier, 'limit', l.balance_limit));
end
$$;
comment on function private.kyc_balance_notice(p_user uuid) is
  'After money arrived that is never refused: tells the user to verify (notification verification_needed and an SMS, at most once a Lagos day) when their tier moves no money (naming the tier that does) or the wallet is above the tier''s balance limit.';
revoke all on function private.kyc_balance_notice(p_user uuid) from public;
grant execute on function private.kyc_balance_notice(p_user uuid) to service_role;

create or replace function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_payee uuid := private.payee_of(e);
  pa public.payout_accounts;
  v_tx uuid;
begin
  if p_amount <= 0 then
    return null;
  end if;
  -- below the identity floor the money stays in the wallet, and the payee is told what lets it out
  if private.kyc_floor_tier(v_payee) is not null then
    perform private.kyc_balance_notice(v_payee);
    return null;
  end if;
  select * into pa from public.payout_accounts where user_id = v_payee and is_default;
  if not found then
    -- the money stays in the wallet: above the tier's balance limit, the payee is told to verify
    perform private.kyc_balance_notice(v_payee);
    return null;
  end if;
  v_tx := private.escrow_transaction(v_payee, e.id, p_milestone, 'escrow_payout',
            pg_catalog.jsonb_build_object('kind', 'escrow_payout', 'title', e.title, 'bank_name', pa.bank_name,
                                          'account_last4', pg_catalog.right(pa.account_number, 4)),
            p_amount, 'out', private.payments_provider(), 'pending',
            pg_catalog.jsonb_build_object('payout_account_id', pa.id, 'bank_name', pa.bank_name,
                                          'account_last4', pg_catalog.right(pa.account_number, 4)));
  perform private.post_transfer('escrow-payout:' || v_tx, 'escrow_payout',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payee), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;
comment on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) is
  'Starts the payee''s bank payout of a release when they have a default payout account and their tier moves money; else the money stays in the wallet, and the payee is told to verify when it is below the identity floor or above the tier''s balance limit (kyc_balance_notice). Returns the pending transaction.';
revoke all on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) from public;
grant execute on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) to service_role;

-- =============================================================================================
-- A dedicated virtual account is a way to pay in: refused below the floor
-- =============================================================================================

create function private.virtual_account_claim(p_user uuid, p_provider text)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  perform private.kyc_floor_check(p_user, 'virtual_account', 'kyc_tier');
  insert into public.virtual_accounts (user_id, status, provider)
  values (p_user, 'pending', p_provider)
  on conflict (user_id) do update set status = 'pending', failure_reason = null, provider = excluded.provider,
                                      updated_at = now()
    where public.virtual_accounts.status = 'inactive';
  return found;
end
$$;
comment on function private.virtual_account_claim(p_user uuid, p_provider text) is
  'virtual-account-create: a pending request for a dedicated account (true), or false when one is already pending or active; refused below the identity floor (kyc_tier_required).';
revoke all on function private.virtual_account_claim(p_user uuid, p_provider text) from public;
grant execute on function private.virtual_account_claim(p_user uuid, p_provider text) to service_role;
