-- =============================================================================================
-- The merchant's fee and the merchant's wallet (docs/merchants.md, docs/money.md)
--
-- - The merchant's wallet is a ledger account of its own: kind merchant_wallet, owner_id the
--   merchant's id, never negative (like a user's wallet).
-- - The fee. A merchant escrow's merchant_fee is the merchant's commission, taken from the payee's
--   side: each release of part X of the amount (escrow_pay_out: a release, a milestone release,
--   the job's release after inspection, a dispute settled by release) credits the merchant
--   share_half_up(merchant_fee, X, amount), capped by what is left of merchant_fee
--   (private.merchant_escrows.merchant_fee_credited keeps what was credited), and the payee gets
--   X less the seller fee share and the merchant's share. A split credits the merchant the half-up
--   share on the payee's part P; the platform keeps whatever rounding leaves. A refund gives the
--   merchant nothing. private.merchant_fee_pay does it for every path: the credit is a transfer of
--   its own (hold -> merchant wallet) with a transaction of its own.
-- - The merchant's transactions are rows of public.transactions owned by the merchant's owner
--   (user_id) and marked with merchant_id; the owner's own reads (RLS: transaction-list, wallet-get)
--   never see them. A fee credit is type escrow_fee, category escrow; a withdrawal is type
--   withdrawal, category withdrawal, counted in the owner's daily limit like any withdrawal.
-- - merchant-withdraw (private.merchant_withdraw_create): the merchant's wallet to the owner's
--   payout account, under the owner's KYC limits; a payout that fails gives the money back to the
--   merchant's wallet (private.payout_fail).
-- - Locks: the payee's and the merchant owner's transaction locks are taken in id order before any
--   account (escrow_pay_out through merchant_fee_pay, dispute_settle with both parties), so a
--   release never waits for the owner's withdrawal while holding what that withdrawal waits for.
-- =============================================================================================

-- ---- the account ---------------------------------------------------------------------------------

alter table private.ledger_accounts
  drop constraint ledger_accounts_owner,
  add constraint ledger_accounts_owner check (
    (kind in ('user_wallet', 'escrow_hold', 'merchant_wallet') and owner_id is not null and shard = 0)
    or (kind not in ('user_wallet', 'escrow_hold', 'merchant_wallet') and owner_id is null)
  ),
  drop constraint ledger_accounts_non_negative,
  add constraint ledger_accounts_non_negative check (
    kind not in ('user_wallet', 'escrow_hold', 'merchant_wallet') or balance >= 0
  );

comment on function private.owner_account(private.account_kind, uuid) is
  'The ledger account of (kind, owner): a user''s wallet, an escrow''s hold or a merchant''s wallet, created on first use.';

-- The merchant's wallet balance in kobo (0 before its first credit).
create function private.merchant_wallet_balance(p_merchant uuid)
returns bigint
language sql
stable
set search_path = ''
as $$
  select coalesce((select a.balance from private.ledger_accounts a
                    where a.kind = 'merchant_wallet' and a.owner_id = p_merchant), 0)::bigint;
$$;
comment on function private.merchant_wallet_balance(uuid) is
  'The merchant''s wallet balance in kobo (its merchant_wallet ledger account); 0 before its first credit.';
revoke all on function private.merchant_wallet_balance(uuid) from public;
grant execute on function private.merchant_wallet_balance(uuid) to service_role;

-- ---- the merchant's transactions -----------------------------------------------------------------

-- no foreign key: only the functions of this file write it, from the merchant's row (an index for
-- the key would serve no query, and the advisors report both an unindexed key and an unused index)
alter table public.transactions add column merchant_id uuid;
comment on column public.transactions.merchant_id is
  'The merchant whose wallet this movement is (its owner is user_id); null for the user''s own. The owner''s reads never show these.';

drop policy "Users can read their own transactions" on public.transactions;
create policy "Users can read their own transactions"
  on public.transactions for select to authenticated
  using (user_id = (select auth.uid()) and merchant_id is null);

-- wallet-get's JSON (security definer, so not under the policy): the pending sums leave out the
-- merchant's withdrawals, which are not the owner's wallet's; otherwise unchanged.
create or replace function reads.wallet()
returns text
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  v_me uuid := (select auth.uid());
  v_json text;
begin
  if v_me is null then
    return null;
  end if;
  select '{"balance":' || (private.wallet_balance(v_me)::float8 / 100)::text
      || ',"pending_deposits":'
      || (coalesce(sum(t.amount) filter (where t.category = 'deposit'), 0)::float8 / 100)::text
      || ',"pending_withdrawals":'
      || (coalesce(sum(t.amount) filter (where t.category = 'withdrawal'), 0)::float8 / 100)::text
      || ',"currency":"NGN","virtual_account":' || coalesce((
           select '{"status":' || to_json(v.status)::text
               || ',"account_number":' || coalesce(to_json(v.account_number)::text, 'null')
               || ',"account_name":' || coalesce(to_json(v.account_name)::text, 'null')
               || ',"bank_name":' || coalesce(to_json(v.bank_name)::text, 'null')
               || ',"failure_reason":'
               || case when v.status = 'inactive' then coalesce(to_json(v.failure_reason)::text, 'null') else 'null' end
               || ',"updated_at":"' || replace((v.updated_at at time zone 'UTC')::text, ' ', 'T') || 'Z"}'
             from public.virtual_accounts v where v.user_id = v_me), 'null')
      || '}'
    into v_json
    from public.transactions t
   where t.user_id = v_me and t.merchant_id is null and t.status = 'pending';
  return v_json;
end
$$;

-- ---- the fee -------------------------------------------------------------------------------------

alter table private.merchant_escrows
  add column merchant_fee_credited bigint not null default 0 check (merchant_fee_credited >= 0);
comment on column private.merchant_escrows.merchant_fee_credited is
  'What the merchant''s wallet has been credited of the escrow''s merchant_fee so far (kobo); never more than merchant_fee.';

-- The merchant's share of a release of p_part of escrow e's amount, credited to its wallet: the
-- half-up share of merchant_fee, capped by what is left of it and by p_cap (what the payee's part
-- can give without going to zero). A transfer of its own (hold -> merchant wallet, key
-- 'merchant-fee:' || p_key) with a transaction of the owner's marked with the merchant. Takes the
-- payee's and the owner's transaction locks in id order first. Answers the share (0 for an app
-- escrow, a fee of 0, or nothing left). The caller holds the escrow's lock.
create function private.merchant_fee_pay(e public.escrows, p_part bigint, p_cap bigint, p_key text, p_milestone uuid)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_owner uuid;
  v_name text;
  v_credited bigint;
  v_share bigint;
  v_user uuid;
  v_tx uuid;
begin
  if e.merchant_id is null or coalesce(e.merchant_fee, 0) = 0 or p_part <= 0 then
    return 0;
  end if;
  select m.owner_id, m.name into v_owner, v_name from private.merchants m where m.id = e.merchant_id;
  for v_user in select x.u from unnest(array[private.payee_of(e), v_owner]) as x(u) order by x.u loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('public.transactions:' || v_user::text, 0));
  end loop;
  select me.merchant_fee_credited into v_credited from private.merchant_escrows me where me.escrow_id = e.id for update;
  v_share := least(private.share_half_up(e.merchant_fee, p_part, e.amount), e.merchant_fee - v_credited,
                   greatest(p_cap, 0));
  if v_share <= 0 then
    return 0;
  end if;
  update private.merchant_escrows set merchant_fee_credited = merchant_fee_credited + v_share where escrow_id = e.id;
  insert into public.transactions (user_id, merchant_id, type, category, message, amount, direction, status, escrow_id,
                                   milestone_id, provider, metadata, completed_at)
  values (v_owner, e.merchant_id, 'escrow_fee', 'escrow',
          pg_catalog.jsonb_build_object('kind', 'merchant_fee', 'title', e.title, 'merchant', v_name),
          v_share, 'in', 'succeeded', e.id, p_milestone, 'wallet',
          pg_catalog.jsonb_build_object('released_amount', p_part, 'merchant_fee', v_share), now())
  returning id into v_tx;
  perform private.post_transfer('merchant-fee:' || p_key, 'merchant_fee',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -v_share),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('merchant_wallet', e.merchant_id), 'amount', v_share)),
    v_tx);
  return v_share;
end
$$;
comment on function private.merchant_fee_pay(public.escrows, bigint, bigint, text, uuid) is
  'The merchant''s fee on a release of part of a merchant escrow: the half-up share of merchant_fee (capped by what is left and by p_cap) from the hold to the merchant''s wallet, with its transaction; answers the share.';
revoke all on function private.merchant_fee_pay(public.escrows, bigint, bigint, text, uuid) from public;
grant execute on function private.merchant_fee_pay(public.escrows, bigint, bigint, text, uuid) to service_role;

-- What a release transfer credited the payee's wallet (0 without a transfer).
create function private.release_payee_credit(p_transfer uuid, p_payee uuid)
returns bigint
language sql
stable
set search_path = ''
as $$
  select coalesce((select le.amount
                     from private.ledger_entries le
                     join private.ledger_accounts a on a.id = le.account_id
                    where le.transfer_id = p_transfer and a.kind = 'user_wallet' and a.owner_id = p_payee), 0)::bigint;
$$;
comment on function private.release_payee_credit(uuid, uuid) is
  'What a release''s ledger transfer credited the payee''s wallet, in kobo (0 without one): the amount its payout starts with.';
revoke all on function private.release_payee_credit(uuid, uuid) from public;
grant execute on function private.release_payee_credit(uuid, uuid) to service_role;

-- escrow_pay_out: the merchant's share first (merchant_fee_pay), then the payee gets the part less
-- the seller fee share and the merchant's share; the release transaction names the merchant's fee.
create or replace function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_after bigint := e.released_amount + p_amount;
  v_payee uuid := private.payee_of(e);
  v_seller_fee bigint := private.escrow_release_share(e, e.seller_fee, p_amount);
  v_payer_fee bigint := private.escrow_release_share(e, e.payer_fee, p_amount);
  v_vat bigint := private.escrow_release_share(e, e.vat, p_amount);
  v_merchant_fee bigint;
  v_payee_gets bigint;
  v_message jsonb := p_message;
  v_metadata jsonb;
  v_tx uuid;
  v_transfer uuid;
  v_entries jsonb;
begin
  -- the payee's limit lock before their transactions and wallet (the order of a withdrawal): the
  -- payout this release may start is checked under it (private.escrow_start_payout)
  perform private.kyc_lock(v_payee);
  if p_amount <= 0 or v_after > e.amount then
    -- an assertion, not a refusal: milestones_fit keeps every release within the amount
    raise exception 'release of % kobo exceeds what is left in escrow', p_amount;
  end if;
  v_merchant_fee := private.merchant_fee_pay(e, p_amount, p_amount - v_seller_fee - 1, p_key, p_milestone);
  v_payee_gets := p_amount - v_seller_fee - v_merchant_fee;
  v_metadata := pg_catalog.jsonb_build_object('released_amount', p_amount, 'seller_fee', v_seller_fee,
                                              'payer_fee', v_payer_fee, 'vat', v_vat);
  if e.merchant_id is not null then
    -- the seller sees the merchant's fee in the description and the metadata
    v_message := v_message || pg_catalog.jsonb_build_object('merchant',
                   (select m.name from private.merchants m where m.id = e.merchant_id), 'merchant_fee', v_merchant_fee);
    v_metadata := v_metadata || pg_catalog.jsonb_build_object('merchant_fee', v_merchant_fee);
  end if;
  v_tx := private.escrow_transaction(v_payee, e.id, p_milestone, 'escrow_release', v_message, v_payee_gets, 'in',
                                     'wallet', 'succeeded', v_metadata);
  v_entries := pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id),
                                  'amount', -(p_amount - v_merchant_fee + v_payer_fee + v_vat)),
    pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payee), 'amount', v_payee_gets));
  if v_seller_fee + v_payer_fee > 0 then
    v_entries := v_entries || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('system', 'platform_fees', 'amount', v_seller_fee + v_payer_fee));
  end if;
  if v_vat > 0 then
    v_entries := v_entries || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('system', 'vat_payable', 'amount', v_vat));
  end if;
  v_transfer := private.post_transfer(p_key, 'escrow_release', v_entries, v_tx);
  update public.escrows set released_amount = v_after, updated_at = now() where id = e.id;
  return v_transfer;
end
$$;
comment on function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb) is
  'Pays part of the escrow amount out of the hold: the merchant''s fee share to its wallet (merchant_fee_pay), the payee''s share to their wallet, fees and VAT to the system accounts.';
revoke all on function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb) from public;
grant execute on function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb) to service_role;

-- ---- the payouts of releases: what the release credited the payee (the merchant's fee taken) ------

-- escrow_release (the payer, or the job after inspection): unchanged but for the payout's amount,
-- now what the release credited the payee (release_payee_credit).
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


-- milestone_release: unchanged but for the payout's amount (release_payee_credit).
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

-- ---- disputes ------------------------------------------------------------------------------------

-- What the payee's release transaction says of the merchant's fee (nothing for an app escrow).
create function private.merchant_fee_message(e public.escrows, p_fee bigint)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select case when e.merchant_id is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('merchant', (select m.name from private.merchants m where m.id = e.merchant_id),
                                                 'merchant_fee', p_fee) end;
$$;
comment on function private.merchant_fee_message(public.escrows, bigint) is
  'The merchant''s name and fee share for the payee''s release description ({} for an app escrow).';
revoke all on function private.merchant_fee_message(public.escrows, bigint) from public;
grant execute on function private.merchant_fee_message(public.escrows, bigint) to service_role;

-- The merchant's fee share in a release transaction's metadata ({} for an app escrow).
create function private.merchant_fee_facts(e public.escrows, p_fee bigint)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select case when e.merchant_id is null then '{}'::jsonb else pg_catalog.jsonb_build_object('merchant_fee', p_fee) end;
$$;
comment on function private.merchant_fee_facts(public.escrows, bigint) is
  'The merchant''s fee share for a release transaction''s metadata ({} for an app escrow).';
revoke all on function private.merchant_fee_facts(public.escrows, bigint) from public;
grant execute on function private.merchant_fee_facts(public.escrows, bigint) to service_role;

-- dispute_settle_release: what the payee received is what the release credited them (the
-- merchant's share taken), for the payout and the notices.
create or replace function private.dispute_settle_release(
  e public.escrows, d public.disputes, p_now timestamptz,
  out payee_gets bigint, out payer_gets bigint, out transfer_id uuid
)
language plpgsql
set search_path = ''
as $$
declare
  v_remaining bigint := e.amount - e.released_amount;
begin
  if v_remaining > 0 then
    transfer_id := private.escrow_pay_out(e, v_remaining, 'dispute-release:' || d.id, null,
      pg_catalog.jsonb_build_object('kind', 'escrow_release', 'title', e.title));
  end if;
  payee_gets := private.release_payee_credit(transfer_id, private.payee_of(e));
  payer_gets := 0;
  update public.escrows set status = 'released', released_at = p_now, updated_at = now() where id = e.id;
end
$$;
comment on function private.dispute_settle_release(public.escrows, public.disputes, timestamptz) is
  'A dispute settled by release: what the hold still has paid out as an escrow release, the escrow released. '
  'Answers what each party received and the transfer. Called by private.dispute_settle under its locks.';
revoke execute on function private.dispute_settle_release(public.escrows, public.disputes, timestamptz)
  from public, anon, authenticated;
grant execute on function private.dispute_settle_release(public.escrows, public.disputes, timestamptz) to service_role;

-- dispute_settle_split: the release part gives the merchant its half-up share on P
-- (merchant_fee_pay) out of the payee's part; the refund part is unchanged.
create or replace function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid)
 RETURNS record
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_remaining bigint := e.amount - e.released_amount;
  v_payer uuid := private.payer_of(e);
  v_payee uuid := private.payee_of(e);
  v_hold bigint;
  v_seller_fee bigint;
  v_payer_fee_back bigint;
  v_vat_back bigint;
  v_vat_kept bigint;
  v_release_debit bigint;
  v_fees_kept bigint;
  v_tx uuid;
  v_entries jsonb;
  v_merchant_fee bigint;
begin
  select balance into v_hold from private.ledger_accounts where kind = 'escrow_hold' and owner_id = e.id for update;
  v_payer_fee_back := private.share_half_up(e.payer_fee, v_remaining - p_payee_amount, e.amount);
  v_vat_back := private.share_half_up(e.vat, v_remaining - p_payee_amount, e.amount);
  payer_gets := (v_remaining - p_payee_amount) + v_payer_fee_back + v_vat_back;
  v_seller_fee := private.share_half_up(e.seller_fee, p_payee_amount, e.amount);
  -- the merchant's share on P (half-up) to its wallet, out of the payee's part (merchant_fee_pay)
  v_merchant_fee := private.merchant_fee_pay(e, p_payee_amount, p_payee_amount - v_seller_fee - 1,
                                             'dispute-release:' || d.id, null);
  payee_gets := p_payee_amount - v_seller_fee - v_merchant_fee;
  -- VAT gets the VAT on P (half-up); the platform gets the rest of the hold, the last kobo of
  -- rounding either way included (never taking VAT beyond what the release part holds)
  v_release_debit := coalesce(v_hold, 0) - payer_gets - v_merchant_fee;
  v_vat_kept := least(private.share_half_up(e.vat, p_payee_amount, e.amount),
                      greatest(v_release_debit - greatest(payee_gets, 0), 0));
  v_fees_kept := v_release_debit - payee_gets - v_vat_kept;
  if v_fees_kept < 0 then
    -- an assertion, not a refusal: dispute_check_split keeps a split within what is held
    raise exception 'the hold of escrow % does not cover the split', e.id;
  end if;
  v_tx := private.escrow_transaction(v_payer, e.id, null, 'escrow_refund',
            pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title), payer_gets, 'in', 'wallet',
            'succeeded', pg_catalog.jsonb_build_object('dispute_id', d.id, 'refunded_amount', v_remaining - p_payee_amount,
                                                       'payer_fee', v_payer_fee_back, 'vat', v_vat_back));
  perform private.post_transfer('dispute-refund:' || d.id, 'escrow_refund',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -payer_gets),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payer), 'amount', payer_gets)),
    v_tx);
  -- On a small escrow the seller fee on P can be all of P (P = 1 kobo where the fee is half the
  -- amount): the payee then gets nothing, and no transaction or wallet entry of 0 is written.
  v_tx := null;
  v_entries := pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -v_release_debit));
  if payee_gets > 0 then
    v_tx := private.escrow_transaction(v_payee, e.id, null, 'escrow_release',
              pg_catalog.jsonb_build_object('kind', 'escrow_release', 'title', e.title)
                || private.merchant_fee_message(e, v_merchant_fee), payee_gets, 'in', 'wallet',
              'succeeded', pg_catalog.jsonb_build_object('dispute_id', d.id, 'released_amount', p_payee_amount,
                                                         'seller_fee', v_seller_fee, 'fees_kept', v_fees_kept,
                                                         'vat', v_vat_kept)
                           || private.merchant_fee_facts(e, v_merchant_fee));
    v_entries := v_entries || pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payee), 'amount', payee_gets));
  end if;
  if v_fees_kept > 0 then
    v_entries := v_entries || pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('system', 'platform_fees', 'amount', v_fees_kept));
  end if;
  if v_vat_kept > 0 then
    v_entries := v_entries || pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('system', 'vat_payable', 'amount', v_vat_kept));
  end if;
  transfer_id := private.post_transfer('dispute-release:' || d.id, 'escrow_release', v_entries, v_tx);
  update public.escrows set status = 'released', released_at = p_now, released_amount = released_amount + p_payee_amount,
                            updated_at = now() where id = e.id;
end
$function$;
comment on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) is 'A dispute settled by a split: R - P with the payer fee and VAT on it back to the payer, P less the seller fee and the merchant''s share (merchant_fee_pay) to the payee, the merchant''s share to its wallet, the VAT on P to VAT and the rest to the platform; the escrow released with P. Answers what each party received and the release part''s transfer. Called by private.dispute_settle under its locks.';
revoke all on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) from public;
grant execute on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) to service_role;

-- dispute_settle: the merchant owner's transaction lock and the merchant's wallet join the locks
-- taken before any money moves; the rest is unchanged.
create or replace function private.dispute_settle(e public.escrows, d public.disputes, p_outcome text, p_payee_amount bigint, p_resolved_by uuid, p_resolution text, p_now timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_payer uuid := private.payer_of(e);
  v_payee uuid := private.payee_of(e);
  v_payee_gets bigint := 0;
  v_payer_gets bigint := 0;
  v_transfer uuid;
  v_payout_tx uuid;
  v_user uuid;
begin
  perform private.dispute_check_split(e, p_outcome, p_payee_amount);
  -- Lock order (the ledger's: a user's transaction lock before their accounts, accounts in id
  -- order): a split posts two transfers, the payer's then the payee's, each with its transaction,
  -- and a payout follows a release. Taken one after the other, a split would lock the payer's side
  -- before the payee's, and deadlock with a split the other way round between the same two users
  -- at the same moment, or (the payee's wallet before a clearing shard) with a withdrawal. So,
  -- first, both users' transaction locks (the key of private.strictly_increasing_created_at on
  -- public.transactions), lower id first, then every account the settlement may touch, in id order.
  -- Before them, the payee's limit lock, which a withdrawal takes before its transaction and
  -- wallet: the payout a settlement may start is checked under it (private.escrow_start_payout).
  perform private.kyc_lock(v_payee);
  -- (a merchant escrow: the merchant owner's transaction lock and the merchant's wallet with them)
  for v_user in select distinct x.u from unnest(array[v_payer, v_payee,
                                                      (select m.owner_id from private.merchants m where m.id = e.merchant_id)]) as x(u)
                 where x.u is not null order by x.u loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('public.transactions:' || v_user::text, 0));
  end loop;
  perform 1 from private.ledger_accounts
   where id in (private.owner_account('escrow_hold', e.id), private.owner_account('user_wallet', v_payer),
                private.owner_account('user_wallet', v_payee), private.system_account('platform_fees'),
                private.system_account('vat_payable'), private.system_account('provider_clearing'),
                case when e.merchant_id is not null then private.owner_account('merchant_wallet', e.merchant_id) end)
   order by id
     for update;
  if p_outcome = 'release' then
    select s.payee_gets, s.payer_gets, s.transfer_id into v_payee_gets, v_payer_gets, v_transfer
      from private.dispute_settle_release(e, d, p_now) s;
  elsif p_outcome = 'refund' then
    select s.payee_gets, s.payer_gets, s.transfer_id into v_payee_gets, v_payer_gets, v_transfer
      from private.dispute_settle_refund(e, p_now) s;
  else
    select s.payee_gets, s.payer_gets, s.transfer_id into v_payee_gets, v_payer_gets, v_transfer
      from private.dispute_settle_split(e, d, p_payee_amount, p_now) s;
  end if;
  -- open milestones end with the escrow: a release pays the agreed ones with it, else cancelled
  perform private.close_milestones(e.id, case when p_outcome = 'release' then v_transfer end);
  if v_payee_gets > 0 then
    v_payout_tx := private.escrow_start_payout(e, v_payee_gets);
  end if;
  update public.disputes
     set status = 'resolved', outcome = p_outcome, payee_amount = case when p_outcome = 'split' then p_payee_amount end,
         resolved_by = p_resolved_by, resolution = p_resolution, resolved_at = p_now, updated_at = now()
   where id = d.id;
  update public.dispute_proposals set status = 'closed', responded_at = p_now
   where dispute_id = d.id and status = 'open';
  perform private.dispute_lock_feeds(e);
  perform private.notify(v_payee, e.id, 'dispute_resolved',
    pg_catalog.jsonb_build_object('kind', 'dispute_resolved', 'title', e.title, 'outcome', p_outcome,
                                  'amount', v_payee_gets, 'by_admin', p_resolved_by is not null),
    'dispute', d.id, 'View dispute');
  perform private.notify(v_payer, e.id, 'dispute_resolved',
    pg_catalog.jsonb_build_object('kind', 'dispute_resolved', 'title', e.title, 'outcome', p_outcome,
                                  'amount', v_payer_gets, 'by_admin', p_resolved_by is not null),
    'dispute', d.id, 'View dispute');
  -- money moved: both parties are told by SMS too, each with what they received
  perform private.queue_sms(u.phone, pg_catalog.jsonb_build_object('kind', 'dispute_settled', 'outcome', p_outcome,
            'amount', case when u.id = v_payee then v_payee_gets else v_payer_gets end))
     from private.users u where u.id in (v_payer, v_payee);
  return v_payout_tx;
end
$function$;
comment on function private.dispute_settle(e public.escrows, d public.disputes, p_outcome text, p_payee_amount bigint, p_resolved_by uuid, p_resolution text, p_now timestamp with time zone) is 'Resolves a dispute with release, refund or split: the money out of the hold (to exactly 0), the escrow closed, both parties told in the app and by SMS. The caller holds the escrow lock.';
revoke all on function private.dispute_settle(e public.escrows, d public.disputes, p_outcome text, p_payee_amount bigint, p_resolved_by uuid, p_resolution text, p_now timestamp with time zone) from public;
grant execute on function private.dispute_settle(e public.escrows, d public.disputes, p_outcome text, p_payee_amount bigint, p_resolved_by uuid, p_resolution text, p_now timestamp with time zone) to service_role;

-- ---- the merchant's withdrawals --------------------------------------------------------------------

-- merchant-withdraw: a pending withdrawal of the merchant's wallet to one of the owner's payout
-- accounts, under the owner's KYC limits (counted like a withdrawal: type withdrawal), marked with
-- the merchant; its id is the Idempotency-Key's reference (the same withdrawal for a resumed
-- request). The amount leaves the merchant's wallet at once for the payout transfer
-- (insufficient_funds, facts {field, balance, amount}, when short). Lock order as a withdrawal's:
-- the owner's limit lock, their transaction lock, then the accounts.
create function private.merchant_withdraw_create(p_owner uuid, p_merchant uuid, p_amount bigint,
                                                 p_payout_account uuid, p_provider text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
  v_ref uuid := private.idempotency_reference();
  v_name text;
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
  select m.name into v_name from private.merchants m where m.id = p_merchant and m.owner_id = p_owner;
  if not found then
    perform private.refuse(404, 'merchant_not_found', '{}'::jsonb);
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
  'merchant-withdraw: a pending withdrawal of the merchant''s wallet to one of its owner''s payout accounts (payout_account_not_found), within the owner''s KYC limits (kyc_tier_required, kyc_limit_exceeded), under the Idempotency-Key''s reference; the amount leaves the merchant''s wallet at once (insufficient_funds, facts {field, balance, amount}, when short).';
revoke all on function private.merchant_withdraw_create(uuid, uuid, bigint, uuid, text) from public;
grant execute on function private.merchant_withdraw_create(uuid, uuid, bigint, uuid, text) to service_role;

-- payout_fail: a merchant's withdrawal that failed goes back to the merchant's wallet, not the
-- owner's; otherwise unchanged.
create or replace function private.payout_fail(p_tx uuid, p_reason text, p_transfer_code text)
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
      pg_catalog.jsonb_build_object('account_id',
        case when t.merchant_id is null then private.owner_account('user_wallet', t.user_id)
             else private.owner_account('merchant_wallet', t.merchant_id) end,
        'amount', t.amount)),
    t.id);
  return 'failed';
end
$$;
comment on function private.payout_fail(uuid, text, text) is
  'A payout transfer failed or was reversed: marked failed and the amount returned, exactly once, to the wallet it left (the merchant''s for a merchant''s withdrawal).';
revoke execute on function private.payout_fail(uuid, text, text) from public, anon, authenticated;
grant execute on function private.payout_fail(uuid, text, text) to service_role;

-- ---- the fee breakdown ------------------------------------------------------------------------------

-- escrow-list's JSON: the fee breakdown gains merchant_fee (0 for an app escrow), and seller_payout
-- is after it (the stored seller_payout less the merchant's fee); otherwise unchanged.
create or replace function reads.escrow_list(p_status text, p_before timestamptz, p_limit integer)
returns text
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  v_me uuid := (select auth.uid());
  v_json text;
begin
  -- the caller's escrows on either side (what the escrows' policy lets them read), newest first;
  -- a status, or every one but the deleted
  select '[' || coalesce(string_agg(
         '{"id":' || to_json(e.id)::text
      || ',"initiator_id":' || to_json(e.initiator_id)::text
      -- to the initiator, the counterparty once they accepted or declined; to the counterparty, themselves
      || ',"counterparty_id":' || case when e.initiator_id = v_me then coalesce(to_json(e.revealed_counterparty_id)::text, 'null')
                                      else to_json(v_me)::text end
      || ',"category":' || to_json(e.category)::text
      || ',"payer_role":' || to_json(e.payer_role)::text
      || ',"title":' || to_json(e.title)::text
      || ',"description":' || to_json(e.description)::text
      || ',"counterparty_phone":' || to_json(e.counterparty_phone)::text
      || ',"transaction_type":' || to_json(e.transaction_type)::text
      || ',"release_type":' || to_json(e.release_type)::text
      || ',"amount":' || (e.amount::float8 / 100)::text
      || ',"currency":' || to_json(e.currency)::text
      || ',"status":' || to_json(e.status)::text
      || ',"inspection_period_days":' || e.inspection_period_days::text
      || ',"created_at":"' || replace((e.created_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"funded_at":' || coalesce('"' || replace((e.funded_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"released_at":' || coalesce('"' || replace((e.released_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"fee_breakdown":{"escrow_amount":' || (e.amount::float8 / 100)::text
      || ',"payer_fee":' || (e.payer_fee::float8 / 100)::text
      || ',"vat":' || (e.vat::float8 / 100)::text
      || ',"total_charge":' || (e.total_charge::float8 / 100)::text
      || ',"seller_fee":' || (e.seller_fee::float8 / 100)::text
      || ',"merchant_fee":' || (coalesce(e.merchant_fee, 0)::float8 / 100)::text
      || ',"seller_payout":' || ((e.seller_payout - coalesce(e.merchant_fee, 0))::float8 / 100)::text || '}'
      || ',"released_amount":' || (e.released_amount::float8 / 100)::text
      || ',"accepted_at":' || coalesce('"' || replace((e.accepted_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"delivered_at":' || coalesce('"' || replace((e.delivered_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"inspection_ends_at":'
      || coalesce('"' || replace((e.inspection_ends_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"refunded_at":' || coalesce('"' || replace((e.refunded_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"cancelled_at":' || coalesce('"' || replace((e.cancelled_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"declined_at":' || coalesce('"' || replace((e.declined_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"updated_at":"' || replace((e.updated_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"merchant":' || case when e.merchant_id is null then 'null'
                                else '{"id":' || to_json(e.merchant_id)::text
                                  || ',"name":' || to_json(e.merchant_name)::text
                                  || ',"fee":' || (e.merchant_fee::float8 / 100)::text || '}' end
      || ',"conversation_id":' || to_json(e.conversation_id)::text || '}',
         ',' order by e.created_at desc), '') || ']'
    into v_json
    from (select e.id, e.initiator_id, e.revealed_counterparty_id, e.category, e.payer_role, e.title, e.description,
                 e.counterparty_phone, e.transaction_type, e.release_type, e.amount, e.currency, e.status,
                 e.inspection_period_days, e.created_at, e.funded_at, e.released_at, e.payer_fee, e.vat,
                 e.total_charge, e.seller_fee, e.seller_payout, e.released_amount, e.accepted_at, e.delivered_at,
                 e.inspection_ends_at, e.refunded_at, e.cancelled_at, e.declined_at, e.updated_at,
                 e.merchant_id, e.merchant_fee, m.name as merchant_name, c.id as conversation_id
            from public.escrows e join public.conversations c on c.escrow_id = e.id
            left join private.merchants m on m.id = e.merchant_id
           where (e.initiator_id = v_me or e.counterparty_id = v_me)
             and case when p_status is null then e.status <> 'deleted' else e.status = p_status end
             and e.created_at < coalesce(p_before, 'infinity'::timestamptz)
           order by e.created_at desc
           limit p_limit) e;
  return v_json;
end
$$;
