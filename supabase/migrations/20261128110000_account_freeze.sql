-- =============================================================================================
-- Frozen accounts (docs/money.md#frozen-accounts)
--
-- An operator may freeze a user's account: from the commit of the freeze until its unfreeze, the
-- account moves no money out, funds nothing, creates no escrow, releases nothing and adds no
-- card, payout account or virtual account (403 account_frozen), and merchants it owns are frozen
-- with it (their keys answer 403 account_frozen). Money that arrives is credited and stays in the
-- wallet: no payout to a bank starts for the account, and the job leaves its unsent payouts
-- alone until it is unfrozen.
--
-- - The state: private.account_freezes, one row per freeze (who, when, why; who unfroze it, when,
--   why). An account is frozen while it has a row that is not closed. Kept for operators only:
--   no user reads it.
-- - Set by private.user_freeze / private.user_unfreeze (service_role; the operator endpoints call
--   them), both idempotent, both under the user's limit lock (private.kyc_lock).
-- - Checked by private.account_frozen_check, in the SQL of each transition, under the same lock
--   for every money path: a request and a freeze of the same user run one after the other, so no
--   money leaves after a freeze commits. The identity floor's check (private.kyc_floor_check)
--   calls it first, so every path the floor guards is guarded by the freeze too (top-up,
--   withdrawal, every funding method, merchant-withdraw, card-add, virtual-account-create); the
--   others call it themselves (escrow-release, milestone-release) or through a trigger on the
--   rows they create (escrows, payout accounts).
-- =============================================================================================

create table private.account_freezes (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  frozen_at timestamptz not null default now(),
  frozen_by uuid not null references private.users (id),
  reason text not null check (pg_catalog.length(reason) between 1 and 500),
  unfrozen_at timestamptz,
  unfrozen_by uuid references private.users (id),
  unfreeze_reason text check (unfreeze_reason is null or pg_catalog.length(unfreeze_reason) between 1 and 500),
  check ((unfrozen_at is null) = (unfrozen_by is null) and (unfrozen_at is null) = (unfreeze_reason is null))
);
comment on table private.account_freezes is
  'Freezes of user accounts by operators, one row per freeze; the account is frozen while its row has no unfrozen_at. Operators only.';
create unique index account_freezes_open_idx on private.account_freezes (user_id) where unfrozen_at is null;
create index account_freezes_user_idx on private.account_freezes (user_id, frozen_at);
alter table private.account_freezes enable row level security;
create policy "Service role manages account freezes" on private.account_freezes
  for all to service_role using (true) with check (true);
revoke all on private.account_freezes from public, anon, authenticated;
grant select, insert, update on private.account_freezes to service_role;

create function private.account_frozen(p_user uuid)
returns boolean
language sql
stable
set search_path = ''
as $$
  select exists (select 1 from private.account_freezes f where f.user_id = p_user and f.unfrozen_at is null)
$$;
comment on function private.account_frozen(p_user uuid) is
  'Whether the user''s account is frozen now (a freeze not yet undone). Reads only: a money path calls private.account_frozen_check, under the user''s limit lock.';
revoke all on function private.account_frozen(p_user uuid) from public;
grant execute on function private.account_frozen(p_user uuid) to service_role;

create function private.account_frozen_check(p_user uuid, p_action text, p_field text, p_lock boolean default true)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if p_action not in ('topup', 'withdrawal', 'escrow_charge', 'escrow_transfer', 'escrow_wallet',
                      'virtual_account', 'card', 'payout_account', 'escrow_create', 'release',
                      'release_milestone', 'merchant_escrow', 'merchant_key') then
    raise exception 'unknown action %', p_action;
  end if;
  if p_lock then
    -- the user's limit lock, until commit: a freeze (which takes it too) waits for this request,
    -- or this request waits for the freeze and, in its next statement, sees it
    perform private.kyc_lock(p_user);
  end if;
  if private.account_frozen(p_user) then
    -- worded by the endpoint (shared/freezes/refusals.ts ACCOUNT_FROZEN)
    perform private.refuse(403, 'account_frozen', pg_catalog.jsonb_build_object('action', p_action, 'field', p_field));
  end if;
end
$$;
comment on function private.account_frozen_check(p_user uuid, p_action text, p_field text, p_lock boolean) is
  'Refuses (account_frozen, facts {action, field}) an action of a frozen account. With p_lock (the money paths), under the user''s limit lock (private.kyc_lock) until commit, which a freeze takes too.';
revoke all on function private.account_frozen_check(p_user uuid, p_action text, p_field text, p_lock boolean) from public;
grant execute on function private.account_frozen_check(p_user uuid, p_action text, p_field text, p_lock boolean) to service_role;

-- ---- setting it -------------------------------------------------------------------------------

create function private.user_freeze(p_user uuid, p_operator uuid, p_reason text)
returns table (freeze_id uuid, frozen_at timestamptz, changed boolean)
language plpgsql
set search_path = ''
as $$
declare
  f private.account_freezes;
begin
  if p_reason is null or pg_catalog.length(pg_catalog.btrim(p_reason)) = 0 then
    -- an assertion: the operator endpoint validates the reason
    raise exception 'a freeze needs a reason';
  end if;
  if not exists (select 1 from private.users where id = p_user) then
    perform private.refuse(404, 'user_not_found', '{}'::jsonb);
  end if;
  -- the user's limit lock: every money request of the user in flight commits first, and every
  -- later one sees the freeze (private.account_frozen_check)
  perform private.kyc_lock(p_user);
  select * into f from private.account_freezes a where a.user_id = p_user and a.unfrozen_at is null;
  if found then
    -- frozen already: the first freeze stands, with its reason
    return query select f.id, f.frozen_at, false;
    return;
  end if;
  insert into private.account_freezes (user_id, frozen_by, reason)
  values (p_user, p_operator, pg_catalog.btrim(p_reason))
  returning * into f;
  return query select f.id, f.frozen_at, true;
end
$$;
comment on function private.user_freeze(p_user uuid, p_operator uuid, p_reason text) is
  'Freezes the user''s account (and the merchants it owns) for the operator, with a reason kept for operators; idempotent (changed false when it was frozen already, the first freeze standing). Waits for the user''s money requests in flight (private.kyc_lock).';
revoke all on function private.user_freeze(p_user uuid, p_operator uuid, p_reason text) from public;
grant execute on function private.user_freeze(p_user uuid, p_operator uuid, p_reason text) to service_role;

create function private.user_unfreeze(p_user uuid, p_operator uuid, p_reason text)
returns table (freeze_id uuid, unfrozen_at timestamptz, changed boolean)
language plpgsql
set search_path = ''
as $$
declare
  f private.account_freezes;
begin
  if p_reason is null or pg_catalog.length(pg_catalog.btrim(p_reason)) = 0 then
    -- an assertion: the operator endpoint validates the reason
    raise exception 'an unfreeze needs a reason';
  end if;
  if not exists (select 1 from private.users where id = p_user) then
    perform private.refuse(404, 'user_not_found', '{}'::jsonb);
  end if;
  perform private.kyc_lock(p_user);
  update private.account_freezes a
     set unfrozen_at = now(), unfrozen_by = p_operator, unfreeze_reason = pg_catalog.btrim(p_reason)
   where a.user_id = p_user and a.unfrozen_at is null
  returning * into f;
  if not found then
    -- not frozen: nothing to undo
    return query select null::uuid, null::timestamptz, false;
    return;
  end if;
  return query select f.id, f.unfrozen_at, true;
end
$$;
comment on function private.user_unfreeze(p_user uuid, p_operator uuid, p_reason text) is
  'Unfreezes the user''s account for the operator, with a reason; idempotent (changed false when it was not frozen). Its money moves again: withdrawals, and the payouts the job left unsent.';
revoke all on function private.user_unfreeze(p_user uuid, p_operator uuid, p_reason text) from public;
grant execute on function private.user_unfreeze(p_user uuid, p_operator uuid, p_reason text) to service_role;

-- ---- the floor's check refuses a frozen account first ----------------------------------------

-- Restated from 20261127033000_refusal_facts_money.sql: the freeze first (under the limit lock,
-- hence no longer stable), then the floor as before.
create or replace function private.kyc_floor_check(p_user uuid, p_action text, p_field text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_required smallint;
begin
  if p_action not in ('topup', 'withdrawal', 'escrow_charge', 'escrow_transfer', 'escrow_wallet',
                      'virtual_account', 'card') then
    raise exception 'unknown action %', p_action;
  end if;
  perform private.account_frozen_check(p_user, p_action, p_field);
  v_required := private.kyc_floor_tier(p_user);
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
  'Refuses an action that moves money, or prepares to, of a frozen account (account_frozen, facts {action, field}; under the user''s limit lock) or while the user''s tier moves none (kyc_tier_required, facts {action, field, tier, required_tier}).';
revoke all on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) from public;
grant execute on function private.kyc_floor_check(p_user uuid, p_action text, p_field text) to service_role;

-- ---- escrows and payout accounts: the rows a frozen account may not create --------------------

create function private.account_frozen_on_insert()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_owner uuid;
begin
  if tg_table_name = 'escrows' then
    if new.merchant_id is not null then
      -- a merchant's escrow: its owner's freeze freezes the merchant
      select m.owner_id into v_owner from private.merchants m where m.id = new.merchant_id;
      perform private.account_frozen_check(v_owner, 'merchant_escrow', 'reference', false);
    else
      perform private.account_frozen_check(new.initiator_id, 'escrow_create', 'counterparty_phone', false);
    end if;
  elsif tg_table_name = 'payout_accounts' then
    perform private.account_frozen_check(new.user_id, 'payout_account', 'account_number', false);
  end if;
  return new;
end
$$;
comment on function private.account_frozen_on_insert() is
  'Refuses (account_frozen) an escrow created by a frozen account or by a merchant whose owner is frozen, and a payout account added by a frozen account.';
revoke all on function private.account_frozen_on_insert() from public;

create trigger escrows_account_frozen before insert on public.escrows
  for each row execute function private.account_frozen_on_insert();
create trigger payout_accounts_account_frozen before insert on public.payout_accounts
  for each row execute function private.account_frozen_on_insert();

-- ---- a merchant's keys: its owner's freeze ----------------------------------------------------

-- Restated from 20261127190000_merchants.sql: a key of a merchant whose owner is frozen is
-- refused with account_frozen (before it takes a unit of the key's rate limit).
create or replace function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer)
returns table (merchant_id uuid, key_id uuid, owner_id uuid, wait integer)
language plpgsql
set search_path = ''
as $$
declare
  v record;
  v_wait integer;
begin
  select k.id, k.merchant_id, m.owner_id, k.last_used_at into v
    from private.merchant_api_keys k
    join private.merchants m on m.id = k.merchant_id
   where k.key_hash = p_hash and k.revoked_at is null and m.status = 'active';
  if not found then
    return;
  end if;
  perform private.account_frozen_check(v.owner_id, 'merchant_key', 'authorization', false);
  v_wait := private.rate_limit_take(pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
    'key', 'merchant-key:' || v.id::text, 'limit', p_max_per_minute, 'window_seconds', 60)));
  -- at most one write a minute per key: the rate limit's lock serialises the key's requests
  if v_wait = 0 and (v.last_used_at is null or v.last_used_at < pg_catalog.now() - interval '1 minute') then
    update private.merchant_api_keys k set last_used_at = pg_catalog.now() where k.id = v.id;
  end if;
  return query select v.merchant_id, v.id, v.owner_id, v_wait;
end
$$;
comment on function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer) is
  'The merchant of a live key of an active merchant by its SHA-256 hash (no row: no such key; account_frozen when its owner is frozen), and the seconds to wait when the key is over p_max_per_minute requests (0: a unit was taken); records last_used_at at most once a minute.';
revoke all on function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer) from public;
grant execute on function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer) to service_role;

-- ---- releases: the payer's freeze; payouts: the payee's ---------------------------------------

-- escrow_release and milestone_release restated from 20261127220100_merchant_fee.sql with the
-- actor's freeze checked after the role (the job's automatic release has no actor and is not
-- refused); escrow_start_payout restated from 20261127050000_kyc_payout_limits.sql: no payout
-- starts for a frozen payee. Nothing else in them changes.

create or replace function private.escrow_release(p_escrow uuid, p_actor uuid, p_now timestamp with time zone)
 RETURNS TABLE(status text, payout_tx uuid)
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  r private.category_rules;
  v_remaining bigint;
  v_payout bigint;
  v_payout_tx uuid;
  v_transfer uuid;
begin
  if p_actor is not null and p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('release', 'payer');
  end if;
  -- the payer's freeze, under their limit lock (after the escrow's lock, as a funding takes them)
  if p_actor is not null then
    perform private.account_frozen_check(p_actor, 'release', 'escrow_id');
  end if;
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'release');
  end if;
  select * into r from private.category_rules where category = e.category;
  if p_actor is not null and r.release_needs_delivery and e.delivered_at is null then
    perform private.refuse(409, 'escrow_not_delivered',
      pg_catalog.jsonb_build_object('category', e.category, 'payee_role', r.payee_label));
  end if;
  if p_actor is null and not (e.status = 'inspection' and e.inspection_ends_at <= p_now) then
    perform private.refuse_state(e, 'auto_release');
  end if;
  v_remaining := e.amount - e.released_amount;
  if v_remaining > 0 then
    v_transfer := private.escrow_pay_out(e, v_remaining, 'escrow-release:' || e.id, null,
      pg_catalog.jsonb_build_object('kind', 'escrow_release', 'title', e.title));
  end if;
  update public.escrows set status = 'released', released_at = p_now, updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, v_transfer);
  -- what the payee was just credited: the rest of the amount less the rest of the seller fee and
  -- the merchant's share
  v_payout := private.release_payee_credit(v_transfer, private.payee_of(e));
  v_payout_tx := private.escrow_start_payout(e, v_payout);
  perform private.notify(private.payee_of(e), e.id, 'released',
    pg_catalog.jsonb_build_object('kind', 'released_payee', 'title', e.title, 'amount', v_payout,
                                  'to', case when v_payout_tx is null then 'wallet' else 'bank' end),
    'escrow', e.id, 'View escrow');
  perform private.notify(private.payer_of(e), e.id, 'released',
    pg_catalog.jsonb_build_object('kind', 'released_payer', 'title', e.title, 'automatic', p_actor is null),
    'escrow', e.id, 'Leave a review');
  return query select 'released'::text, v_payout_tx;
end
$function$;
comment on function private.escrow_release(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) is 'escrow-release by the payer, or the job when an inspection period ends: pays out the rest and closes the escrow.';
revoke all on function private.escrow_release(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) from public;
grant execute on function private.escrow_release(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) to service_role;

create or replace function private.milestone_release(p_milestone uuid, p_actor uuid)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  l record;
  v_transfer uuid;
  v_payout uuid;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if p_actor is distinct from private.payer_of(l.e) then
    perform private.refuse_role('release_milestone', 'client');
  end if;
  -- the client's freeze, under their limit lock (after the escrow's lock, as a funding takes them)
  perform private.account_frozen_check(p_actor, 'release_milestone', 'milestone_id');
  if (l.m).status <> 'completed' then
    perform private.refuse(409, 'milestone_wrong_state', pg_catalog.jsonb_build_object('action', 'release', 'status', (l.m).status));
  end if;
  if (l.e).status not in ('funded', 'inspection') then
    perform private.refuse_state(l.e, 'release_milestone');
  end if;
  v_transfer := private.escrow_pay_out(l.e, (l.m).amount, 'milestone-release:' || (l.m).id, (l.m).id,
    pg_catalog.jsonb_build_object('kind', 'milestone_release', 'milestone', (l.m).title));
  update public.milestones set status = 'released', released_at = now(), release_tx_id = v_transfer, updated_at = now()
   where id = (l.m).id;
  -- what the payee was just credited: the milestone's amount less its share of the seller fee and
  -- the merchant's share
  v_payout := private.escrow_start_payout(l.e, private.release_payee_credit(v_transfer, private.payee_of(l.e)), (l.m).id);
  perform private.notify(private.payee_of(l.e), (l.e).id, 'milestone_released',
    pg_catalog.jsonb_build_object('kind', 'milestone_released', 'milestone', (l.m).title), 'milestone', (l.m).id,
    'View milestone');
  if (l.e).released_amount + (l.m).amount = (l.e).amount then
    -- the last of the money: the escrow itself is released, and both parties are told
    update public.escrows set status = 'released', released_at = now(), updated_at = now() where id = (l.e).id;
    perform private.notify(private.payee_of(l.e), (l.e).id, 'released',
      pg_catalog.jsonb_build_object('kind', 'milestones_released_payee', 'title', (l.e).title, 'amount', (l.e).amount),
      'escrow', (l.e).id, 'View escrow');
    perform private.notify(private.payer_of(l.e), (l.e).id, 'released',
      pg_catalog.jsonb_build_object('kind', 'milestones_released_payer', 'title', (l.e).title), 'escrow', (l.e).id,
      'Leave a review');
  end if;
  return v_payout;
end
$function$;
comment on function private.milestone_release(p_milestone uuid, p_actor uuid) is 'milestone-release by the client: pays a completed milestone out of the funded escrow, releasing it when all are paid.';
revoke all on function private.milestone_release(p_milestone uuid, p_actor uuid) from public;
grant execute on function private.milestone_release(p_milestone uuid, p_actor uuid) to service_role;

create or replace function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_payee uuid := private.payee_of(e);
  pa public.payout_accounts;
  v_held jsonb;
  v_tx uuid;
begin
  if p_amount <= 0 then
    return null;
  end if;
  -- a frozen payee's money stays in the wallet until they are unfrozen (the caller holds the
  -- payee's limit lock, so a freeze committed before this point is seen)
  if private.account_frozen(v_payee) then
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
  -- a payout is money leaving the service, as a withdrawal is: over the single limit, or past the
  -- daily one, it stays in the wallet and the payee is told which tier lets it out
  v_held := private.kyc_payout_limit(v_payee, p_amount);
  if v_held is not null then
    perform private.kyc_payout_notice(v_payee, v_held);
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
  'Starts the payee''s bank payout of a release when they are not frozen (a frozen payee''s money stays in the wallet), they have a default payout account, their tier moves money and the payout is within their single and daily limits (kyc_payout_limit, counted like a withdrawal); else the money stays in the wallet and the payee is told to verify: below the identity floor or above the balance limit (kyc_balance_notice), or over a limit (kyc_payout_notice). Returns the pending transaction.';
revoke all on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) from public;
grant execute on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) to service_role;
