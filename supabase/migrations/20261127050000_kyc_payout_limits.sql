-- =============================================================================================
-- Payouts count against the payee's KYC limits (docs/kyc.md#payouts-and-the-limits)
--
-- A release, a milestone release or a dispute settlement credits the payee's wallet and, when
-- they have a default payout account, starts a payout to their bank at once
-- (private.escrow_start_payout). That payout is money leaving the service exactly as a
-- withdrawal is, but it was neither counted toward the payee's day (private.kyc_used_today) nor
-- held to their single limit: a tier-1 payee received NGN 992,500 in their bank from one release
-- while their own withdrawal of NGN 50,000.01 was refused. Now:
--
--   * an escrow payout, pending or succeeded, counts toward the day like a withdrawal (kyc-status
--     shows it in used_today, and a withdrawal after it sees it);
--   * a payout above the single limit, or one that would take the day past the daily limit, does
--     not start: the money stays credited in the wallet (the release itself never fails) and the
--     payee is told once a Lagos day (notification verification_needed, kind verify_to_pay_out,
--     and an SMS) which limit held it and which tier would lift it; they withdraw it once their
--     limits allow;
--   * the check runs under the same per-user lock as private.kyc_limit_check, until commit, so two
--     releases (or a release and a withdrawal) at the same moment never both pass the daily limit.
-- =============================================================================================

-- =============================================================================================
-- The day's total: escrow payouts count like withdrawals
-- =============================================================================================

create or replace function private.kyc_used_today(p_user uuid, p_now timestamptz)
returns bigint
language sql
stable
set search_path = ''
as $$
  -- money moved into the service (card top-ups, bank transfers in, card fundings of escrows) and
  -- out of it (withdrawals and escrow payouts to the bank), pending or done, since 00:00 Lagos; a
  -- wallet funding moves money already counted, and an escrow's payment request is not a charge
  select coalesce(sum(t.amount), 0)::bigint
    from public.transactions t
   where t.user_id = p_user
     and t.created_at >= private.lagos_day_start(p_now)
     and t.status in ('pending', 'succeeded')
     and (t.type in ('wallet_topup', 'virtual_account_deposit', 'withdrawal', 'escrow_payout')
          or (t.type = 'escrow_funding' and t.metadata ->> 'kind' = 'escrow_charge'));
$$;
comment on function private.kyc_used_today(p_user uuid, p_now timestamptz) is
  'What counts toward the user''s daily limit today (Africa/Lagos): top-ups, bank transfers in, card fundings, withdrawals and escrow payouts, pending or succeeded, in kobo.';
revoke all on function private.kyc_used_today(p_user uuid, p_now timestamptz) from public;
grant execute on function private.kyc_used_today(p_user uuid, p_now timestamptz) to service_role;

-- =============================================================================================
-- One lock for a user's limits, taken before their transactions and wallet
-- =============================================================================================

create function private.kyc_lock(p_user uuid)
returns void
language sql
set search_path = ''
as $$ select pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('kyc-limit:' || p_user::text, 0)) $$;
comment on function private.kyc_lock(p_user uuid) is
  'Until commit, the per-user lock under which a movement is checked against the KYC limits (the key private.kyc_limit_check takes). A release or a settlement takes it for the payee before it writes their transactions or wallet, in the order a withdrawal takes them, so the two never deadlock.';
revoke all on function private.kyc_lock(p_user uuid) from public;
grant execute on function private.kyc_lock(p_user uuid) to service_role;

-- =============================================================================================
-- A payout within the payee's limits, or the facts of the limit that holds it
-- =============================================================================================

create function private.kyc_payout_limit(p_user uuid, p_amount bigint)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  l private.kyc_tiers%rowtype;
  v_used bigint;
  v_limit text;
  v_allowed smallint;
begin
  -- the lock private.kyc_limit_check takes: a withdrawal, a funding and another payout of this user
  -- wait until this transaction commits, and then count the payout it creates (the release or the
  -- settlement took it already, before the payee's transactions and wallet: it is held again here)
  perform private.kyc_lock(p_user);
  select t.* into l from private.kyc_tiers t join private.users u on u.kyc_tier = t.tier where u.id = p_user;
  if not found then
    select t.* into l from private.kyc_tiers t where t.tier = 0;
  end if;
  v_used := private.kyc_used_today(p_user, now());
  if p_amount > l.single_limit then
    v_limit := 'single';
  elsif v_used + p_amount > l.daily_limit then
    v_limit := 'daily';
  else
    return null;
  end if;
  select min(t.tier) into v_allowed from private.kyc_tiers t
   where t.tier > l.tier and t.single_limit >= p_amount and t.daily_limit >= v_used + p_amount;
  return pg_catalog.jsonb_build_object(
    'kyc_limit', v_limit, 'tier', l.tier, 'amount', p_amount,
    'limit', case v_limit when 'single' then l.single_limit else l.daily_limit end,
    'used_today', v_used, 'allowed_tier', v_allowed);
end
$$;
comment on function private.kyc_payout_limit(p_user uuid, p_amount bigint) is
  'Null when a payout of p_amount to the user''s bank is within their tier''s single and daily limits (escrow payouts and withdrawals counted alike); else the facts {kyc_limit: single|daily, tier, amount, limit, used_today, allowed_tier}. Takes the per-user lock of kyc_limit_check until commit.';
revoke all on function private.kyc_payout_limit(p_user uuid, p_amount bigint) from public;
grant execute on function private.kyc_payout_limit(p_user uuid, p_amount bigint) to service_role;

-- =============================================================================================
-- The payee told that a payout was held by a limit (once a Lagos day, with the other notices)
-- =============================================================================================

create function private.kyc_payout_notice(p_user uuid, p_facts jsonb)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_phone text;
begin
  -- once a day (Lagos) is enough, whichever "verify" notice went first (private.kyc_balance_notice)
  if exists (select 1 from public.notifications
              where user_id = p_user and event_type = 'verification_needed' and escrow_id is null
                and created_at >= private.lagos_day_start(now())) then
    return;
  end if;
  perform private.notify_account(p_user, 'verification_needed',
    pg_catalog.jsonb_build_object('kind', 'verify_to_pay_out', 'amount', p_facts -> 'amount',
                                  'kyc_limit', p_facts -> 'kyc_limit', 'limit', p_facts -> 'limit',
                                  'tier', p_facts -> 'allowed_tier'),
    'Verify identity');
  select phone into v_phone from private.users where id = p_user;
  perform private.queue_sms(v_phone,
    pg_catalog.jsonb_build_object('kind', 'verify_to_pay_out', 'amount', p_facts -> 'amount',
                                  'kyc_limit', p_facts -> 'kyc_limit', 'limit', p_facts -> 'limit',
                                  'tier', p_facts -> 'allowed_tier'));
end
$$;
comment on function private.kyc_payout_notice(p_user uuid, p_facts jsonb) is
  'A payout held by the payee''s single or daily limit (facts of kyc_payout_limit): tells them (notification verification_needed, kind verify_to_pay_out, and an SMS) that the money is in the wallet and which tier lifts the limit, at most once a Lagos day together with kyc_balance_notice.';
revoke all on function private.kyc_payout_notice(p_user uuid, p_facts jsonb) from public;
grant execute on function private.kyc_payout_notice(p_user uuid, p_facts jsonb) to service_role;

-- =============================================================================================
-- Every payout a release, a milestone release or a settlement starts meets the limits
-- =============================================================================================

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
  'Starts the payee''s bank payout of a release when they have a default payout account, their tier moves money and the payout is within their single and daily limits (kyc_payout_limit, counted like a withdrawal); else the money stays in the wallet and the payee is told to verify: below the identity floor or above the balance limit (kyc_balance_notice), or over a limit (kyc_payout_notice). Returns the pending transaction.';
revoke all on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) from public;
grant execute on function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid) to service_role;

-- =============================================================================================
-- Releases, milestone releases and settlements take the payee's limit lock first
--
-- A withdrawal takes the user's limit lock, then their transactions' lock (the key of
-- private.strictly_increasing_created_at) and their wallet. A release credited the payee's wallet
-- first and would then take the limit lock for its payout: the opposite order, a deadlock with a
-- withdrawal at the same moment (seen in tests/integration/kyc-limits.test.ts as 500s once the
-- retries ran out). The money paths now take the payee's limit lock first: escrow_pay_out (a
-- release and a milestone release) and dispute_settle (before both parties' transaction locks).
-- Their bodies are otherwise unchanged.
-- =============================================================================================

create or replace function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_after bigint := e.released_amount + p_amount;
  v_payee uuid := private.payee_of(e);
  v_seller_fee bigint := private.escrow_release_share(e, e.seller_fee, p_amount);
  v_payer_fee bigint := private.escrow_release_share(e, e.payer_fee, p_amount);
  v_vat bigint := private.escrow_release_share(e, e.vat, p_amount);
  v_payee_gets bigint := p_amount - v_seller_fee;
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
  v_tx := private.escrow_transaction(v_payee, e.id, p_milestone, 'escrow_release', p_message, v_payee_gets, 'in',
                                     'wallet', 'succeeded',
            pg_catalog.jsonb_build_object('released_amount', p_amount, 'seller_fee', v_seller_fee, 'payer_fee', v_payer_fee, 'vat', v_vat));
  v_entries := pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -(p_amount + v_payer_fee + v_vat)),
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
$function$;
comment on function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb) is 'Pays part of the escrow amount out of the hold: the payee''s share to their wallet, fees and VAT to the system accounts.';
revoke all on function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb) from public;
grant execute on function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb) to service_role;

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
  for v_user in select x.u from unnest(array[v_payer, v_payee]) as x(u) order by x.u loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('public.transactions:' || v_user::text, 0));
  end loop;
  perform 1 from private.ledger_accounts
   where id in (private.owner_account('escrow_hold', e.id), private.owner_account('user_wallet', v_payer),
                private.owner_account('user_wallet', v_payee), private.system_account('platform_fees'),
                private.system_account('vat_payable'), private.system_account('provider_clearing'))
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
