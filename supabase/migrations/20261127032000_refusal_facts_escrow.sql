-- =============================================================================================
-- Refusal facts: escrow (and milestones), disputes, reviews
--
-- Every function of these areas that refused in English now refuses with private.refuse(status,
-- code, facts) (20261127030000_refusal_facts.sql); the endpoints word each code
-- (shared/escrow/refusals.ts, shared/disputes/refusals.ts, shared/reviews/refusals.ts).
-- private.refuse_role takes the operation and the role that may do it (its one-argument English
-- form is dropped); private.refuse_state gives the escrow's status, whether it is funded and the
-- action's key. A wallet funding the wallet cannot cover is insufficient_funds (409) with the
-- balance, the total and the shortfall. A split above what is held and one's own phone as the
-- counterparty depend on stored state: 409s with their own codes (they were 400s). Guards that no
-- request can reach (a release above the amount, a split the hold cannot cover, a rating or
-- feedback the body schema refuses) are assertions without a refusal's SQLSTATE.
-- =============================================================================================

drop function private.refuse_role(p_message text);

create or replace function private.refuse_role(p_operation text, p_role text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  perform private.refuse(403, 'escrow_wrong_party',
    pg_catalog.jsonb_build_object('operation', p_operation, 'role', p_role));
end
$function$;
comment on function private.refuse_role(p_operation text, p_role text) is 'Refuses escrow_wrong_party (403): a party doing what its role may not; the facts name the operation and the role that may do it.';
revoke all on function private.refuse_role(p_operation text, p_role text) from public;
grant execute on function private.refuse_role(p_operation text, p_role text) to service_role;

create or replace function private.refuse_state(e public.escrows, p_action text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  perform private.refuse(409, 'escrow_wrong_state',
    pg_catalog.jsonb_build_object('status', e.status, 'funded', e.funded_at is not null, 'action', p_action));
end
$function$;
comment on function private.refuse_state(e public.escrows, p_action text) is 'Refuses escrow_wrong_state (409): the escrow''s current state (status, funded) does not allow the action (a key: accept, fund, release, ...); the API words what comes first.';
revoke all on function private.refuse_state(e public.escrows, p_action text) from public;
grant execute on function private.refuse_state(e public.escrows, p_action text) to service_role;

create or replace function private.escrow_lock(p_escrow uuid, p_actor uuid)
 RETURNS public.escrows
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows;
begin
  select * into e from public.escrows where id = p_escrow for update;
  if not found or (p_actor is not null and p_actor is distinct from e.initiator_id and p_actor is distinct from e.counterparty_id) then
    perform private.refuse(404, 'escrow_not_found', '{}'::jsonb);
  end if;
  return e;
end
$function$;
comment on function private.escrow_lock(p_escrow uuid, p_actor uuid) is 'Locks an escrow for an operation and returns it; ES404 unless the actor is one of its parties (a null actor is the system).';
revoke all on function private.escrow_lock(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_lock(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.escrow_accept(p_escrow uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_name text;
  v_tx uuid;
begin
  if p_actor is distinct from e.counterparty_id then
    perform private.refuse_role('accept', 'counterparty');
  end if;
  select first_name || ' ' || last_name into v_name from public.profiles where id = p_actor;
  if e.status = 'invite_pending' then
    -- the counterparty is the payer: accepted, now waiting for their money
    update public.escrows set status = 'active', accepted_at = now(), updated_at = now() where id = e.id;
    perform private.notify(e.initiator_id, e.id, 'active',
      pg_catalog.jsonb_build_object('kind', 'accepted', 'accepter', v_name, 'title', e.title), 'escrow', e.id,
      'View escrow');
    v_tx := private.escrow_transaction(p_actor, e.id, null, 'escrow_funding',
              pg_catalog.jsonb_build_object('kind', 'payment_request', 'title', e.title), e.total_charge, 'out',
              'wallet', 'pending',
              pg_catalog.jsonb_build_object('payment_request', true, 'amount', e.amount, 'payer_fee', e.payer_fee, 'vat', e.vat));
    perform private.notify(p_actor, e.id, 'payment_requested',
      pg_catalog.jsonb_build_object('kind', 'payment_requested', 'title', e.title, 'total_charge', e.total_charge),
      'transaction', v_tx, 'Fund escrow');
    return 'active';
  elsif private.escrow_is_funded_unaccepted(e) then
    update public.escrows set status = 'funded', accepted_at = now(), updated_at = now() where id = e.id;
    perform private.notify(e.initiator_id, e.id, 'active',
      pg_catalog.jsonb_build_object('kind', 'accepted_funded', 'accepter', v_name, 'title', e.title), 'escrow', e.id,
      'View escrow');
    return 'funded';
  end if;
  perform private.refuse_state(e, 'accept');
  return null;
end
$function$;
comment on function private.escrow_accept(p_escrow uuid, p_actor uuid) is 'escrow-accept by the invited counterparty: active (asked to pay) when they are the payer, funded when the money is in.';
revoke all on function private.escrow_accept(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_accept(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.escrow_cancel(p_escrow uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if private.escrow_is_unfunded(e) then
    return private.escrow_close_unfunded(e, 'cancelled');
  elsif private.escrow_is_funded_unaccepted(e) then
    -- funded, never accepted: the payer may take the money back
    if p_actor is distinct from private.payer_of(e) then
      perform private.refuse_role('cancel_funded', 'payer');
    end if;
    return private.escrow_refund_unaccepted(e, 'cancelled');
  end if;
  perform private.refuse_state(e, 'cancel');
  return null;
end
$function$;
comment on function private.escrow_cancel(p_escrow uuid, p_actor uuid) is 'escrow-cancel: cancels an unfunded escrow, or (by the payer) refunds a funded one not yet accepted.';
revoke all on function private.escrow_cancel(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_cancel(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.escrow_decline(p_escrow uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if p_actor is distinct from e.counterparty_id then
    perform private.refuse_role('decline', 'counterparty');
  end if;
  if private.escrow_is_unfunded(e) then
    update public.escrows set declined_at = now() where id = e.id;
    return private.escrow_close_unfunded(e, 'declined');
  elsif private.escrow_is_funded_unaccepted(e) then
    update public.escrows set declined_at = now() where id = e.id;
    return private.escrow_refund_unaccepted(e, 'declined');
  end if;
  perform private.refuse_state(e, 'decline');
  return null;
end
$function$;
comment on function private.escrow_decline(p_escrow uuid, p_actor uuid) is 'escrow-decline by the invited counterparty: cancels an unfunded escrow or refunds a funded, unaccepted one; records declined_at.';
revoke all on function private.escrow_decline(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_decline(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.escrow_delete(p_escrow uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if p_actor is distinct from e.initiator_id then
    perform private.refuse_role('delete', 'initiator');
  end if;
  if e.status <> 'draft' then
    perform private.refuse_state(e, 'delete');
  end if;
  update public.escrows set status = 'deleted', awaiting_bank_transfer_at = null, updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, null);
  update public.transactions set status = 'canceled', completed_at = now()
   where escrow_id = e.id and type = 'escrow_funding' and status = 'pending';
  return 'deleted';
end
$function$;
comment on function private.escrow_delete(p_escrow uuid, p_actor uuid) is 'escrow-delete by the initiator: a draft escrow is marked deleted.';
revoke all on function private.escrow_delete(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_delete(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.escrow_deliver(p_escrow uuid, p_actor uuid, p_now timestamp with time zone)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  r private.category_rules;
begin
  if p_actor is distinct from private.payee_of(e) then
    perform private.refuse_role('deliver', 'payee');
  end if;
  if e.status <> 'funded' or e.delivered_at is not null then
    perform private.refuse_state(e, 'deliver');
  end if;
  select * into r from private.category_rules where category = e.category;
  if r.inspection_on_delivery then
    update public.escrows
       set status = 'inspection', delivered_at = p_now, updated_at = now(),
           inspection_ends_at = p_now + pg_catalog.make_interval(days => e.inspection_period_days)
     where id = e.id;
    perform private.notify(private.payer_of(e), e.id, 'delivered',
      pg_catalog.jsonb_build_object('kind', 'delivered_inspection', 'title', e.title, 'days', e.inspection_period_days),
      'escrow', e.id, 'Inspect delivery');
    return 'inspection';
  end if;
  update public.escrows set delivered_at = p_now, updated_at = now() where id = e.id;
  perform private.notify(private.payer_of(e), e.id, 'delivered',
    pg_catalog.jsonb_build_object('kind', 'delivered', 'title', e.title), 'escrow', e.id, 'Release funds');
  return 'funded';
end
$function$;
comment on function private.escrow_deliver(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) is 'escrow-deliver by the payee: records delivery, opening the inspection period where the category has one.';
revoke all on function private.escrow_deliver(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) from public;
grant execute on function private.escrow_deliver(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) to service_role;

create or replace function private.escrow_fundable(e public.escrows, p_actor uuid)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  if p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('fund', 'payer');
  end if;
  if not private.escrow_is_fundable(e) then
    perform private.refuse_state(e, 'fund');
  end if;
end
$function$;
comment on function private.escrow_fundable(e public.escrows, p_actor uuid) is 'Refuses (ES403, ES409) unless the actor is the payer and the escrow is a draft or accepted but unfunded.';
revoke all on function private.escrow_fundable(e public.escrows, p_actor uuid) from public;
grant execute on function private.escrow_fundable(e public.escrows, p_actor uuid) to service_role;

create or replace function private.escrow_refund(p_escrow uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_amount bigint;
begin
  if p_actor is distinct from private.payee_of(e) then
    perform private.refuse_role('refund', 'payee');
  end if;
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'refund');
  end if;
  v_amount := private.escrow_return_hold(e, pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title));
  update public.escrows set status = 'refunded', refunded_at = now(), updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, null);
  perform private.notify(u, e.id, 'refunded',
    pg_catalog.jsonb_build_object('kind', 'refunded', 'title', e.title, 'amount', v_amount),
    'escrow', e.id, 'View escrow')
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
  return 'refunded';
end
$function$;
comment on function private.escrow_refund(p_escrow uuid, p_actor uuid) is 'escrow-refund by the payee: the hold goes back to the payer''s wallet and the escrow is refunded.';
revoke all on function private.escrow_refund(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_refund(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.escrow_create(p_initiator uuid, p_category public.escrow_category, p_payer_role text, p_title text, p_description text, p_counterparty_phone text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_invite_token_hash text)
 RETURNS TABLE(escrow_id uuid, conversation_id uuid)
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  r private.category_rules;
  e public.escrows;
  v_conversation uuid;
  v_counterparty uuid;
  v_initiator_phone text;
  v_name text;
  v_status text := case when p_payer_role = 'initiator' then 'draft' else 'invite_pending' end;
begin
  select * into r from private.category_rules where category = p_category;
  select phone into v_initiator_phone from private.users where id = p_initiator;
  if v_initiator_phone = p_counterparty_phone then
    perform private.refuse(409, 'counterparty_is_self', pg_catalog.jsonb_build_object('field', 'counterparty_phone'));
  end if;
  -- linked at once when the phone has an account (the invitee sees the invite), but no answer to
  -- the initiator shows the link before the counterparty accepts or declines
  select id into v_counterparty from private.users where phone = p_counterparty_phone;
  select first_name || ' ' || last_name into v_name from public.profiles where id = p_initiator;

  insert into public.escrows (initiator_id, counterparty_id, counterparty_phone, category, payer_role, title, description,
                              transaction_type, release_type, amount, status, inspection_period_days,
                              payer_fee, vat, total_charge, seller_fee, seller_payout, invite_token_hash)
  values (p_initiator, v_counterparty, p_counterparty_phone, p_category, p_payer_role, p_title, coalesce(p_description, ''),
          r.transaction_type, r.release_type, p_amount, v_status, r.inspection_period_days,
          p_payer_fee, p_vat, p_amount + p_payer_fee + p_vat, p_seller_fee, p_amount - p_seller_fee, p_invite_token_hash)
  returning * into e;
  insert into public.conversations (escrow_id) values (e.id) returning id into v_conversation;

  perform private.notify(p_initiator, e.id, 'escrow_created',
    pg_catalog.jsonb_build_object('kind', 'escrow_created', 'title', p_title, 'amount', p_amount),
    'escrow', e.id, 'View escrow');
  if v_status = 'invite_pending' then
    -- the counterparty pays: invite them at once (in the app with the deal's own words; by SMS
    -- with none of them)
    perform private.notify(v_counterparty, e.id, 'invite_received',
      pg_catalog.jsonb_build_object('kind', 'invite_received', 'inviter', v_name, 'title', p_title, 'amount', p_amount,
                                    'category', p_category),
      'escrow', e.id, 'Review invitation');
    perform private.queue_invite_sms(e);
  end if;
  return query select e.id, v_conversation;
end
$function$;
comment on function private.escrow_create(p_initiator uuid, p_category public.escrow_category, p_payer_role text, p_title text, p_description text, p_counterparty_phone text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_invite_token_hash text) is 'escrow-create: the escrow, its conversation, the initiator''s notification and, when the counterparty pays, the invitation (notification and capped SMS).';
revoke all on function private.escrow_create(p_initiator uuid, p_category public.escrow_category, p_payer_role text, p_title text, p_description text, p_counterparty_phone text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_invite_token_hash text) from public;
grant execute on function private.escrow_create(p_initiator uuid, p_category public.escrow_category, p_payer_role text, p_title text, p_description text, p_counterparty_phone text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_invite_token_hash text) to service_role;

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
  -- what the payee was just credited: the rest of the amount less the rest of the seller fee
  v_payout := v_remaining - private.escrow_release_share(e, e.seller_fee, v_remaining);
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

create or replace function private.escrow_fund_wallet_request(p_escrow uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_balance bigint;
begin
  perform private.escrow_fundable(e, p_actor);
  -- the single limit only: the wallet's money was counted toward the day when it came in
  perform private.kyc_limit_check(p_actor, e.total_charge, 'escrow_wallet', 'escrow_id');
  begin
    return private.escrow_fund_wallet(e.id, p_actor);
  exception when sqlstate 'ES402' then
    -- the wallet would go negative (private.post_transfer): what it holds, read after the
    -- funding's work was rolled back, is the refusal's facts
    v_balance := private.wallet_balance(p_actor);
    perform private.refuse(409, 'insufficient_funds',
      pg_catalog.jsonb_build_object('field', 'escrow_id', 'balance', v_balance, 'amount', e.total_charge));
    return null;
  end;
end
$function$;
comment on function private.escrow_fund_wallet_request(p_escrow uuid, p_actor uuid) is 'escrow-fund from the wallet, as the payer asks it: within the payer''s single KYC limit (ES403 otherwise), then private.escrow_fund_wallet; a wallet that holds less than the total charge is refused insufficient_funds (409) with its balance and the total charge (amount) in kobo. (A bank transfer that arrives for a waiting escrow funds it without a second check: the request was checked.)';
revoke all on function private.escrow_fund_wallet_request(p_escrow uuid, p_actor uuid) from public;
grant execute on function private.escrow_fund_wallet_request(p_escrow uuid, p_actor uuid) to service_role;

create or replace function private.milestone_lock(p_milestone uuid, p_actor uuid)
 RETURNS TABLE(m public.milestones, e public.escrows)
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_escrow uuid;
begin
  select escrow_id into v_escrow from public.milestones where id = p_milestone;
  if v_escrow is null then
    perform private.refuse(404, 'milestone_not_found', '{}'::jsonb);
  end if;
  -- escrow first, then the milestone: the same lock order as every escrow operation
  e := private.escrow_lock(v_escrow, p_actor);
  select * into m from public.milestones where id = p_milestone for update;
  return next;
end
$function$;
comment on function private.milestone_lock(p_milestone uuid, p_actor uuid) is 'Locks a milestone''s escrow, then the milestone, for an operation; ES404 unless the actor is a party.';
revoke all on function private.milestone_lock(p_milestone uuid, p_actor uuid) from public;
grant execute on function private.milestone_lock(p_milestone uuid, p_actor uuid) to service_role;

create or replace function private.milestone_approve(p_milestone uuid, p_actor uuid)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  l record;
  v_status text;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if not private.escrow_milestones_may_change(l.e) then
    perform private.refuse_state(l.e, 'change_milestones');
  end if;
  if (l.m).status <> 'proposed' then
    perform private.refuse(409, 'milestone_wrong_state', pg_catalog.jsonb_build_object('action', 'approve', 'status', (l.m).status));
  end if;
  update public.milestones set
    initiator_approved = initiator_approved or p_actor is not distinct from (l.e).initiator_id,
    counterparty_approved = counterparty_approved or p_actor is not distinct from (l.e).counterparty_id,
    updated_at = now()
  where id = (l.m).id
  returning case when initiator_approved and counterparty_approved then 'accepted' else 'proposed' end into v_status;
  if v_status = 'accepted' then
    update public.milestones set status = 'accepted', accepted_at = now() where id = (l.m).id;
    perform private.notify(u, (l.e).id, 'milestone_accepted',
      pg_catalog.jsonb_build_object('kind', 'milestone_accepted', 'milestone', (l.m).title), 'milestone', (l.m).id,
      'View milestone')
       from unnest(array[(l.e).initiator_id, (l.e).counterparty_id]) as u;
  end if;
  return v_status;
end
$function$;
comment on function private.milestone_approve(p_milestone uuid, p_actor uuid) is 'milestone-approve by a party; the milestone is accepted once both parties approved. Returns its status.';
revoke all on function private.milestone_approve(p_milestone uuid, p_actor uuid) from public;
grant execute on function private.milestone_approve(p_milestone uuid, p_actor uuid) to service_role;

create or replace function private.milestone_complete(p_milestone uuid, p_actor uuid)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  l record;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if p_actor is distinct from private.payee_of(l.e) then
    perform private.refuse_role('complete_milestone', 'freelancer');
  end if;
  if not private.escrow_milestones_may_change(l.e) then
    perform private.refuse_state(l.e, 'complete_milestone');
  end if;
  if (l.m).status <> 'accepted' then
    perform private.refuse(409, 'milestone_wrong_state', pg_catalog.jsonb_build_object('action', 'complete', 'status', (l.m).status));
  end if;
  update public.milestones set status = 'completed', completed_at = now(), updated_at = now() where id = (l.m).id;
  perform private.notify(private.payer_of(l.e), (l.e).id, 'milestone_completed',
    pg_catalog.jsonb_build_object('kind', 'milestone_completed', 'milestone', (l.m).title, 'amount', (l.m).amount),
    'milestone', (l.m).id, 'Release milestone');
end
$function$;
comment on function private.milestone_complete(p_milestone uuid, p_actor uuid) is 'milestone-complete by the freelancer: an accepted milestone is marked completed and the client asked to release it.';
revoke all on function private.milestone_complete(p_milestone uuid, p_actor uuid) from public;
grant execute on function private.milestone_complete(p_milestone uuid, p_actor uuid) to service_role;

create or replace function private.milestone_create(p_escrow uuid, p_actor uuid, p_title text, p_description text, p_amount bigint, p_due date)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_id uuid;
  v_other uuid;
begin
  if e.category <> 'hiring' then
    perform private.refuse(409, 'milestones_hiring_only', pg_catalog.jsonb_build_object('category', e.category));
  end if;
  if not private.escrow_milestones_may_change(e) then
    perform private.refuse_state(e, 'add_milestones');
  end if;
  perform private.milestones_fit(e, p_amount, null);
  insert into public.milestones (escrow_id, created_by, milestone_index, title, description, amount, due_date,
                                 initiator_approved, counterparty_approved)
  values (e.id, p_actor,
          (select coalesce(max(milestone_index), 0) + 1 from public.milestones where escrow_id = e.id),
          p_title, p_description, p_amount, p_due,
          -- an invited counterparty who has not signed up yet (counterparty_id null) has not approved
          p_actor is not distinct from e.initiator_id, p_actor is not distinct from e.counterparty_id)
  returning id into v_id;
  v_other := case when p_actor = e.initiator_id then e.counterparty_id else e.initiator_id end;
  perform private.notify(v_other, e.id, 'milestone_proposed',
    pg_catalog.jsonb_build_object('kind', 'milestone_proposed', 'milestone', p_title, 'amount', p_amount,
                                  'title', e.title),
    'milestone', v_id, 'Review milestone');
  return v_id;
end
$function$;
comment on function private.milestone_create(p_escrow uuid, p_actor uuid, p_title text, p_description text, p_amount bigint, p_due date) is 'milestone-create on a hiring escrow: a proposed milestone, approved by its proposer; the other party is asked to review.';
revoke all on function private.milestone_create(p_escrow uuid, p_actor uuid, p_title text, p_description text, p_amount bigint, p_due date) from public;
grant execute on function private.milestone_create(p_escrow uuid, p_actor uuid, p_title text, p_description text, p_amount bigint, p_due date) to service_role;

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
  -- what the payee was just credited: the milestone's amount less its share of the seller fee
  v_payout := private.escrow_start_payout(l.e,
    (l.m).amount - private.escrow_release_share(l.e, (l.e).seller_fee, (l.m).amount), (l.m).id);
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

create or replace function private.milestone_update(p_milestone uuid, p_actor uuid, p_changes jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  l record;
  v_amount bigint;
  v_title text;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if not private.escrow_milestones_may_change(l.e) then
    perform private.refuse_state(l.e, 'change_milestones');
  end if;
  if (l.m).status <> 'proposed' then
    perform private.refuse(409, 'milestone_wrong_state', pg_catalog.jsonb_build_object('action', 'edit', 'status', (l.m).status));
  end if;
  v_amount := coalesce((p_changes ->> 'amount')::bigint, (l.m).amount);
  perform private.milestones_fit(l.e, v_amount, (l.m).id);
  update public.milestones set
    title = case when p_changes ? 'title' then p_changes ->> 'title' else title end,
    description = case when p_changes ? 'description' then p_changes ->> 'description' else description end,
    amount = v_amount,
    due_date = case when p_changes ? 'due_date' then (p_changes ->> 'due_date')::date else due_date end,
    changes_note = case when p_changes ? 'changes_note' then p_changes ->> 'changes_note' else changes_note end,
    initiator_approved = (p_actor is not distinct from (l.e).initiator_id),
    counterparty_approved = (p_actor is not distinct from (l.e).counterparty_id),
    updated_at = now()
  where id = (l.m).id
  returning title into v_title;
  -- the other party's approval was taken back: they are asked to review the new terms
  perform private.notify(case when p_actor = (l.e).initiator_id then (l.e).counterparty_id else (l.e).initiator_id end,
    (l.e).id, 'milestone_updated',
    pg_catalog.jsonb_build_object('kind', 'milestone_updated', 'milestone', v_title, 'title', (l.e).title),
    'milestone', (l.m).id, 'Review milestone');
end
$function$;
comment on function private.milestone_update(p_milestone uuid, p_actor uuid, p_changes jsonb) is 'milestone-update of a proposed milestone: the editor''s approval stands and the other party must approve again.';
revoke all on function private.milestone_update(p_milestone uuid, p_actor uuid, p_changes jsonb) from public;
grant execute on function private.milestone_update(p_milestone uuid, p_actor uuid, p_changes jsonb) to service_role;

create or replace function private.milestones_fit(e public.escrows, p_extra bigint, p_except uuid)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  if (select coalesce(sum(amount), 0) from public.milestones
       where escrow_id = e.id and status <> 'cancelled' and id is distinct from p_except) + p_extra > e.amount then
    perform private.refuse(409, 'milestones_exceed_amount', pg_catalog.jsonb_build_object('escrow_amount', e.amount));
  end if;
end
$function$;
comment on function private.milestones_fit(e public.escrows, p_extra bigint, p_except uuid) is 'Refuses (ES409) when the escrow''s milestones that are not cancelled, plus an amount, would exceed the escrow amount.';
revoke all on function private.milestones_fit(e public.escrows, p_extra bigint, p_except uuid) from public;
grant execute on function private.milestones_fit(e public.escrows, p_extra bigint, p_except uuid) to service_role;

create or replace function private.dispute_check_split(e public.escrows, p_outcome text, p_payee_amount bigint)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_remaining bigint := e.amount - e.released_amount;
begin
  if p_outcome = 'split' and (p_payee_amount is null or p_payee_amount < 1 or p_payee_amount > v_remaining - 1) then
    perform private.refuse(409, 'split_exceeds_held',
      pg_catalog.jsonb_build_object('field', 'payee_amount', 'payee_amount', p_payee_amount, 'max_payee_amount', v_remaining - 1));
  end if;
end
$function$;
comment on function private.dispute_check_split(e public.escrows, p_outcome text, p_payee_amount bigint) is 'Refuses split_exceeds_held (409) a split whose payee_amount is not between 1 kobo and what is not yet released less 1 kobo.';
revoke all on function private.dispute_check_split(e public.escrows, p_outcome text, p_payee_amount bigint) from public;
grant execute on function private.dispute_check_split(e public.escrows, p_outcome text, p_payee_amount bigint) to service_role;

create or replace function private.dispute_open(e public.escrows, p_negotiating boolean)
 RETURNS public.disputes
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  d public.disputes;
begin
  select * into d from public.disputes where escrow_id = e.id and status in ('negotiation', 'escalated') for update;
  if not found then
    perform private.refuse(409, 'dispute_not_open', '{}'::jsonb);
  end if;
  if p_negotiating and d.status <> 'negotiation' then
    perform private.refuse(409, 'dispute_wrong_state', pg_catalog.jsonb_build_object('status', d.status, 'action', 'negotiate'));
  end if;
  return d;
end
$function$;
comment on function private.dispute_open(e public.escrows, p_negotiating boolean) is 'The escrow''s open dispute, locked (ES409 when none, or when it must be in negotiation and is escalated).';
revoke all on function private.dispute_open(e public.escrows, p_negotiating boolean) from public;
grant execute on function private.dispute_open(e public.escrows, p_negotiating boolean) to service_role;

create or replace function private.dispute_propose(p_escrow uuid, p_actor uuid, p_outcome text, p_payee_amount bigint, p_now timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
  v_id uuid;
begin
  d := private.dispute_open(e, true);
  -- each proposal notifies the other party: 20 per party and dispute are plenty to negotiate
  if (select count(*) from public.dispute_proposals x where x.dispute_id = d.id and x.proposed_by = p_actor) >= 20 then
    perform private.refuse(409, 'dispute_proposal_limit', pg_catalog.jsonb_build_object('limit', 20));
  end if;
  perform private.dispute_check_split(e, p_outcome, p_payee_amount);
  update public.dispute_proposals set status = 'superseded', responded_at = p_now
   where dispute_id = d.id and proposed_by = p_actor and status = 'open';
  insert into public.dispute_proposals (dispute_id, proposed_by, outcome, payee_amount, created_at)
  values (d.id, p_actor, p_outcome, case when p_outcome = 'split' then p_payee_amount end, p_now)
  returning id into v_id;
  perform private.notify(case when p_actor = e.initiator_id then e.counterparty_id else e.initiator_id end, e.id,
    'dispute_proposal',
    pg_catalog.jsonb_build_object('kind', 'dispute_proposal', 'title', e.title, 'outcome', p_outcome,
                                  'payee_amount', case when p_outcome = 'split' then p_payee_amount end),
    'dispute', d.id, 'Respond to proposal');
  return v_id;
end
$function$;
comment on function private.dispute_propose(p_escrow uuid, p_actor uuid, p_outcome text, p_payee_amount bigint, p_now timestamp with time zone) is 'dispute-propose: a party proposes release, refund or a split of what is still held; it replaces their open proposal.';
revoke all on function private.dispute_propose(p_escrow uuid, p_actor uuid, p_outcome text, p_payee_amount bigint, p_now timestamp with time zone) from public;
grant execute on function private.dispute_propose(p_escrow uuid, p_actor uuid, p_outcome text, p_payee_amount bigint, p_now timestamp with time zone) to service_role;

create or replace function private.dispute_raise(p_escrow uuid, p_actor uuid, p_reason_code text, p_reason text, p_now timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
begin
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'raise_dispute');
  end if;
  -- an inspection period that ended is owed to the payee, even before the job releases it
  if e.status = 'inspection' and e.inspection_ends_at <= p_now then
    perform private.refuse(409, 'inspection_ended', pg_catalog.jsonb_build_object('inspection_ended_at', e.inspection_ends_at));
  end if;
  -- raising and withdrawing again and again would freeze the money: one withdrawal per party
  if exists (select 1 from public.disputes x where x.escrow_id = e.id and x.raised_by = p_actor and x.status = 'withdrawn') then
    perform private.refuse(409, 'dispute_withdrawn_before', '{}'::jsonb);
  end if;
  insert into public.disputes (escrow_id, raised_by, reason_code, reason, previous_status, inspection_left,
                               negotiation_deadline, auto_release_at, created_at)
  values (e.id, p_actor, p_reason_code, p_reason, e.status,
          case when e.status = 'inspection' then greatest(e.inspection_ends_at - p_now, interval '0') end,
          p_now + interval '72 hours',
          case when p_actor = private.payer_of(e) then p_now + interval '72 hours' end,
          p_now)
  returning * into d;
  update public.escrows set status = 'disputed', updated_at = now() where id = e.id;
  perform private.dispute_notify(e, d, 'dispute_raised',
    pg_catalog.jsonb_build_object('kind', 'dispute_raised', 'title', e.title, 'reason_code', p_reason_code,
                                  'by_payer', p_actor = private.payer_of(e)),
    'View dispute');
  return d.id;
end
$function$;
comment on function private.dispute_raise(p_escrow uuid, p_actor uuid, p_reason_code text, p_reason text, p_now timestamp with time zone) is 'dispute-raise by a party of a funded escrow or one in inspection: the escrow becomes disputed, the inspection clock stops.';
revoke all on function private.dispute_raise(p_escrow uuid, p_actor uuid, p_reason_code text, p_reason text, p_now timestamp with time zone) from public;
grant execute on function private.dispute_raise(p_escrow uuid, p_actor uuid, p_reason_code text, p_reason text, p_now timestamp with time zone) to service_role;

create or replace function private.dispute_respond(p_escrow uuid, p_actor uuid, p_proposal uuid, p_accept boolean, p_now timestamp with time zone)
 RETURNS TABLE(status text, payout_tx uuid)
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
  p public.dispute_proposals;
begin
  d := private.dispute_open(e, true);
  select * into p from public.dispute_proposals where id = p_proposal and dispute_id = d.id for update;
  if not found then
    perform private.refuse(404, 'proposal_not_found', '{}'::jsonb);
  end if;
  if p.proposed_by = p_actor then
    perform private.refuse(403, 'dispute_wrong_party', pg_catalog.jsonb_build_object('operation', 'respond', 'role', 'other_party'));
  end if;
  if p.status <> 'open' then
    perform private.refuse(409, 'proposal_not_open', pg_catalog.jsonb_build_object('status', p.status));
  end if;
  if not p_accept then
    update public.dispute_proposals set status = 'rejected', responded_at = p_now where id = p.id;
    perform private.notify(p.proposed_by, e.id, 'dispute_proposal_rejected',
      pg_catalog.jsonb_build_object('kind', 'dispute_proposal_rejected', 'title', e.title, 'outcome', p.outcome),
      'dispute', d.id, 'View dispute');
    return query select 'rejected'::text, null::uuid;
    return;
  end if;
  update public.dispute_proposals set status = 'accepted', responded_at = p_now where id = p.id;
  return query select 'accepted'::text,
    private.dispute_settle(e, d, p.outcome, p.payee_amount, null, null, p_now);
end
$function$;
comment on function private.dispute_respond(p_escrow uuid, p_actor uuid, p_proposal uuid, p_accept boolean, p_now timestamp with time zone) is 'dispute-respond: the other party accepts (settled at once) or rejects an open proposal.';
revoke all on function private.dispute_respond(p_escrow uuid, p_actor uuid, p_proposal uuid, p_accept boolean, p_now timestamp with time zone) from public;
grant execute on function private.dispute_respond(p_escrow uuid, p_actor uuid, p_proposal uuid, p_accept boolean, p_now timestamp with time zone) to service_role;

create or replace function private.dispute_withdraw(p_escrow uuid, p_actor uuid, p_now timestamp with time zone)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
begin
  d := private.dispute_open(e, true);
  if d.raised_by <> p_actor then
    perform private.refuse(403, 'dispute_wrong_party', pg_catalog.jsonb_build_object('operation', 'withdraw', 'role', 'raiser'));
  end if;
  update public.disputes set status = 'withdrawn', withdrawn_at = p_now, updated_at = now() where id = d.id;
  update public.dispute_proposals set status = 'closed', responded_at = p_now where dispute_id = d.id and status = 'open';
  update public.escrows
     set status = d.previous_status,
         inspection_ends_at = case when d.previous_status = 'inspection' then p_now + d.inspection_left
                                   else inspection_ends_at end,
         updated_at = now()
   where id = e.id;
  perform private.dispute_notify(e, d, 'dispute_withdrawn',
    pg_catalog.jsonb_build_object('kind', 'dispute_withdrawn', 'title', e.title), 'View escrow');
  return d.previous_status;
end
$function$;
comment on function private.dispute_withdraw(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) is 'dispute-withdraw by the raiser while negotiated: the escrow returns to funded, or to inspection with the time it had left.';
revoke all on function private.dispute_withdraw(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) from public;
grant execute on function private.dispute_withdraw(p_escrow uuid, p_actor uuid, p_now timestamp with time zone) to service_role;

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
begin
  select balance into v_hold from private.ledger_accounts where kind = 'escrow_hold' and owner_id = e.id for update;
  v_payer_fee_back := private.share_half_up(e.payer_fee, v_remaining - p_payee_amount, e.amount);
  v_vat_back := private.share_half_up(e.vat, v_remaining - p_payee_amount, e.amount);
  payer_gets := (v_remaining - p_payee_amount) + v_payer_fee_back + v_vat_back;
  v_seller_fee := private.share_half_up(e.seller_fee, p_payee_amount, e.amount);
  payee_gets := p_payee_amount - v_seller_fee;
  -- VAT gets the VAT on P (half-up); the platform gets the rest of the hold, the last kobo of
  -- rounding either way included (never taking VAT beyond what the release part holds)
  v_release_debit := coalesce(v_hold, 0) - payer_gets;
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
              pg_catalog.jsonb_build_object('kind', 'escrow_release', 'title', e.title), payee_gets, 'in', 'wallet',
              'succeeded', pg_catalog.jsonb_build_object('dispute_id', d.id, 'released_amount', p_payee_amount,
                                                         'seller_fee', v_seller_fee, 'fees_kept', v_fees_kept,
                                                         'vat', v_vat_kept));
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
comment on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) is 'A dispute settled by a split: R - P with the payer fee and VAT on it back to the payer, P less the seller fee to the payee, the VAT on P to VAT and the rest to the platform; the escrow released with P. Answers what each party received and the release part''s transfer. Called by private.dispute_settle under its locks.';
revoke all on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) from public;
grant execute on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) to service_role;

create or replace function private.admin_dispute_resolve(p_dispute uuid, p_admin uuid, p_outcome text, p_payee_amount bigint, p_resolution text, p_now timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_escrow uuid;
  e public.escrows;
  d public.disputes;
  v_payout uuid;
begin
  select escrow_id into v_escrow from public.disputes where id = p_dispute;
  if not found then
    perform private.refuse(404, 'dispute_not_found', pg_catalog.jsonb_build_object('by', 'id'));
  end if;
  e := private.escrow_lock(v_escrow, null);
  -- no one decides their own case
  if p_admin in (e.initiator_id, e.counterparty_id) then
    perform private.refuse(403, 'admin_is_party', pg_catalog.jsonb_build_object('dispute_id', p_dispute));
  end if;
  select * into d from public.disputes where id = p_dispute for update;
  if d.status not in ('negotiation', 'escalated') then
    perform private.refuse(409, 'dispute_wrong_state', pg_catalog.jsonb_build_object('status', d.status, 'action', 'resolve'));
  end if;
  v_payout := private.dispute_settle(e, d, p_outcome, p_payee_amount, p_admin, p_resolution, p_now);
  perform private.admin_record(p_admin, 'dispute.resolve', 'dispute', d.id,
    pg_catalog.jsonb_build_object('escrow_id', e.id, 'outcome', p_outcome, 'payee_amount', p_payee_amount,
                                  'resolution', p_resolution, 'previous_status', d.status));
  return v_payout;
end
$function$;
comment on function private.admin_dispute_resolve(p_dispute uuid, p_admin uuid, p_outcome text, p_payee_amount bigint, p_resolution text, p_now timestamp with time zone) is 'admin-dispute-resolve: an admin settles an open dispute with release, refund or a split and a resolution; audited.';
revoke all on function private.admin_dispute_resolve(p_dispute uuid, p_admin uuid, p_outcome text, p_payee_amount bigint, p_resolution text, p_now timestamp with time zone) from public;
grant execute on function private.admin_dispute_resolve(p_dispute uuid, p_admin uuid, p_outcome text, p_payee_amount bigint, p_resolution text, p_now timestamp with time zone) to service_role;

create or replace function private.review_submit(p_escrow uuid, p_reviewer uuid, p_rating integer, p_feedback text)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_reviewer);
  v_reviewee uuid;
  v_reviewee_reviewed boolean;
  v_name text;
  v_id uuid;
begin
  if e.status = 'deleted' then
    perform private.refuse(404, 'escrow_not_found', '{}'::jsonb);
  end if;
  if e.status not in ('released', 'refunded', 'ended') then
    perform private.refuse_state(e, 'review');
  end if;
  if e.accepted_at is null then
    perform private.refuse(409, 'review_never_accepted', '{}'::jsonb);
  end if;
  if p_rating is null or p_rating not between 1 and 5 then
    -- an assertion: review-submit's body schema refuses these before
    raise exception 'rating must be an integer from 1 to 5';
  end if;
  if pg_catalog.char_length(p_feedback) > 2000 then
    raise exception 'feedback must be at most 2000 characters';
  end if;
  -- the escrow lock serialises every review of this escrow: the check below sees the other's
  if exists (select 1 from public.reviews r where r.escrow_id = e.id and r.reviewer_id = p_reviewer) then
    perform private.refuse(409, 'already_reviewed', '{}'::jsonb);
  end if;
  v_reviewee := case when p_reviewer = e.initiator_id then e.counterparty_id else e.initiator_id end;
  insert into public.reviews (escrow_id, reviewer_id, reviewee_id, rating, feedback)
  values (e.id, p_reviewer, v_reviewee, p_rating, nullif(p_feedback, ''))
  returning id into v_id;
  v_reviewee_reviewed := exists (
    select 1 from public.reviews r where r.escrow_id = e.id and r.reviewer_id = v_reviewee);
  if v_reviewee_reviewed and e.status <> 'ended' then
    update public.escrows set status = 'ended', ended_at = now(), updated_at = now() where id = e.id;
  end if;
  select p.first_name || ' ' || p.last_name into v_name from public.profiles p where p.id = p_reviewer;
  perform private.notify(v_reviewee, e.id, 'review_received',
    pg_catalog.jsonb_build_object('kind', 'review_received', 'reviewer', v_name, 'title', e.title,
                                  'rating', p_rating),
    'review', v_id, case when v_reviewee_reviewed then null else 'Leave a review' end);
  return v_id;
end
$function$;
comment on function private.review_submit(p_escrow uuid, p_reviewer uuid, p_rating integer, p_feedback text) is 'review-submit: a party rates the other party of a released, refunded or ended escrow, once; the escrow ends when both have reviewed; the reviewee is notified. Returns the review id.';
revoke all on function private.review_submit(p_escrow uuid, p_reviewer uuid, p_rating integer, p_feedback text) from public;
grant execute on function private.review_submit(p_escrow uuid, p_reviewer uuid, p_rating integer, p_feedback text) to service_role;
