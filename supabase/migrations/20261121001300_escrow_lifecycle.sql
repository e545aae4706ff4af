-- =============================================================================================
-- Escrow lifecycle after creation: accept, decline, cancel, delete, deliver, release, refund, and
-- the payout of what was released. One SQL function per transition (docs/escrow.md); each locks
-- the escrow first (private.escrow_lock) and refuses with ES403/ES404/ES409.
-- =============================================================================================

-- =============================================================================================
-- Accept, decline, cancel, delete
-- =============================================================================================

create function private.escrow_accept(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_name text;
  v_tx uuid;
begin
  if p_actor is distinct from e.counterparty_id then
    perform private.refuse_role('only the invited counterparty can accept this escrow');
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
$$;
comment on function private.escrow_accept(uuid, uuid) is
  'escrow-accept by the invited counterparty: active (asked to pay) when they are the payer, funded when the money is '
  'in.';
revoke execute on function private.escrow_accept(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_accept(uuid, uuid) to service_role;

-- Returns the hold (whatever is left in it) to the payer's wallet and records it (p_message: what
-- the refund transaction's description says).
create function private.escrow_return_hold(e public.escrows, p_message jsonb)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_hold bigint;
  v_payer uuid := private.payer_of(e);
  v_tx uuid;
begin
  select balance into v_hold from private.ledger_accounts where kind = 'escrow_hold' and owner_id = e.id for update;
  if coalesce(v_hold, 0) = 0 then
    return 0;
  end if;
  v_tx := private.escrow_transaction(v_payer, e.id, null, 'escrow_refund', p_message, v_hold, 'in', 'wallet',
                                     'succeeded', '{}'::jsonb);
  perform private.post_transfer('escrow-refund:' || e.id, 'escrow_refund',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -v_hold),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payer), 'amount', v_hold)),
    v_tx);
  return v_hold;
end
$$;
comment on function private.escrow_return_hold(public.escrows, jsonb) is
  'Returns whatever is left in an escrow''s hold to the payer''s wallet with a refund transaction; returns the amount.';
revoke execute on function private.escrow_return_hold(public.escrows, jsonb) from public, anon, authenticated;
grant execute on function private.escrow_return_hold(public.escrows, jsonb) to service_role;

-- p_event: declined or cancelled.
create function private.escrow_close_unfunded(e public.escrows, p_event text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  update public.escrows set status = 'cancelled', cancelled_at = now(), awaiting_bank_transfer_at = null, updated_at = now()
   where id = e.id;
  perform private.close_milestones(e.id, null);
  update public.transactions set status = 'canceled', completed_at = now()
   where escrow_id = e.id and type = 'escrow_funding' and status = 'pending';
  perform private.notify(u, e.id, p_event,
    pg_catalog.jsonb_build_object('kind', 'closed_unfunded', 'title', e.title, 'how', p_event), 'escrow', e.id,
    'View escrow')
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
  return 'cancelled';
end
$$;
comment on function private.escrow_close_unfunded(public.escrows, text) is
  'Cancels an unfunded escrow (declined or cancelled): its milestones closed, pending funding canceled, parties told.';
revoke execute on function private.escrow_close_unfunded(public.escrows, text) from public, anon, authenticated;
grant execute on function private.escrow_close_unfunded(public.escrows, text) to service_role;

-- A funded escrow that was never accepted, declined or cancelled (p_verb): the hold goes back to
-- the payer's wallet and the escrow is refunded.
create function private.escrow_refund_unaccepted(e public.escrows, p_verb text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  perform private.escrow_return_hold(e,
    pg_catalog.jsonb_build_object('kind', 'refund_unaccepted', 'title', e.title, 'how', p_verb));
  update public.escrows set status = 'refunded', refunded_at = now(), updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, null);
  perform private.notify(u, e.id, p_verb,
    pg_catalog.jsonb_build_object('kind', 'refunded_unaccepted', 'title', e.title, 'how', p_verb,
                                  'amount', e.total_charge),
    'escrow', e.id, 'View escrow')
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
  return 'refunded';
end
$$;
comment on function private.escrow_refund_unaccepted(public.escrows, text) is
  'Refunds a funded escrow that was never accepted (declined or cancelled): the hold goes back to the payer.';
revoke execute on function private.escrow_refund_unaccepted(public.escrows, text) from public, anon, authenticated;
grant execute on function private.escrow_refund_unaccepted(public.escrows, text) to service_role;

-- Declining is recorded (declined_at), so the initiator may now see who declined.
create function private.escrow_decline(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if p_actor is distinct from e.counterparty_id then
    perform private.refuse_role('only the invited counterparty can decline this escrow');
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
$$;
comment on function private.escrow_decline(uuid, uuid) is
  'escrow-decline by the invited counterparty: cancels an unfunded escrow or refunds a funded, unaccepted one; '
  'records declined_at.';
revoke execute on function private.escrow_decline(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_decline(uuid, uuid) to service_role;

create function private.escrow_cancel(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if private.escrow_is_unfunded(e) then
    return private.escrow_close_unfunded(e, 'cancelled');
  elsif private.escrow_is_funded_unaccepted(e) then
    -- funded, never accepted: the payer may take the money back
    if p_actor is distinct from private.payer_of(e) then
      perform private.refuse_role('only the payer can cancel a funded escrow before it is accepted');
    end if;
    return private.escrow_refund_unaccepted(e, 'cancelled');
  end if;
  perform private.refuse_state(e, 'cancel');
  return null;
end
$$;
comment on function private.escrow_cancel(uuid, uuid) is
  'escrow-cancel: cancels an unfunded escrow, or (by the payer) refunds a funded one not yet accepted.';
revoke execute on function private.escrow_cancel(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_cancel(uuid, uuid) to service_role;

create function private.escrow_delete(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if p_actor is distinct from e.initiator_id then
    perform private.refuse_role('only the initiator can delete this escrow');
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
$$;
comment on function private.escrow_delete(uuid, uuid) is
  'escrow-delete by the initiator: a draft escrow is marked deleted.';
revoke execute on function private.escrow_delete(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_delete(uuid, uuid) to service_role;

-- =============================================================================================
-- Deliver, release, refund
-- =============================================================================================

create function private.escrow_deliver(p_escrow uuid, p_actor uuid, p_now timestamptz)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  r private.category_rules;
begin
  if p_actor is distinct from private.payee_of(e) then
    perform private.refuse_role('only the payee can mark this escrow delivered');
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
$$;
comment on function private.escrow_deliver(uuid, uuid, timestamptz) is
  'escrow-deliver by the payee: records delivery, opening the inspection period where the category has one.';
revoke execute on function private.escrow_deliver(uuid, uuid, timestamptz) from public, anon, authenticated;
grant execute on function private.escrow_deliver(uuid, uuid, timestamptz) to service_role;

-- The part of a total (the seller fee, the payer fee or the VAT) that releasing p_release kobo of
-- the escrow amount carries, after e.released_amount was released before. Shares are cumulative
-- (the total times the amount released so far over the escrow amount, rounded down, less the same
-- before this release), so the last release takes every remainder and the shares of all the
-- releases add up to the total exactly.
create function private.escrow_release_share(e public.escrows, p_total bigint, p_release bigint) returns bigint
language sql immutable set search_path = ''
as $$ select (p_total * (e.released_amount + p_release)) / e.amount - (p_total * e.released_amount) / e.amount $$;
comment on function private.escrow_release_share(public.escrows, bigint, bigint) is
  'The cumulative share of a fee or VAT total that a release of part of the escrow amount carries.';
revoke execute on function private.escrow_release_share(public.escrows, bigint, bigint)
  from public, anon, authenticated;
grant execute on function private.escrow_release_share(public.escrows, bigint, bigint) to service_role;

-- Pays p_amount of the escrow amount out of the hold: the payee's share to their wallet, the fee
-- and VAT shares (private.escrow_release_share) to the system accounts; the hold ends at exactly
-- zero with the last release. p_message is what the release transaction's description says.
-- Returns the ledger transfer id.
create function private.escrow_pay_out(
  e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_message jsonb
)
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
  v_payee_gets bigint := p_amount - v_seller_fee;
  v_tx uuid;
  v_transfer uuid;
  v_entries jsonb;
begin
  if p_amount <= 0 or v_after > e.amount then
    raise exception 'release of % kobo exceeds what is left in escrow', p_amount using errcode = 'ES409';
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
$$;
comment on function private.escrow_pay_out(public.escrows, bigint, text, uuid, jsonb) is
  'Pays part of the escrow amount out of the hold: the payee''s share to their wallet, fees and VAT to the system '
  'accounts.';
revoke execute on function private.escrow_pay_out(public.escrows, bigint, text, uuid, jsonb)
  from public, anon, authenticated;
grant execute on function private.escrow_pay_out(public.escrows, bigint, text, uuid, jsonb) to service_role;

-- Starts the payee's payout when they have a default payout account: their wallet -> clearing,
-- and a pending escrow_payout transaction, with the configured provider, whose id is the transfer
-- reference (shared/payouts.ts sends it after commit; the job retries payouts never started).
create function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_payee uuid := private.payee_of(e);
  pa public.payout_accounts;
  v_tx uuid;
begin
  select * into pa from public.payout_accounts where user_id = v_payee and is_default;
  if not found or p_amount <= 0 then
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
comment on function private.escrow_start_payout(public.escrows, bigint, uuid) is
  'Starts the payee''s bank payout of a release when they have a default payout account; returns the pending '
  'transaction.';
revoke execute on function private.escrow_start_payout(public.escrows, bigint, uuid) from public, anon, authenticated;
grant execute on function private.escrow_start_payout(public.escrows, bigint, uuid) to service_role;

-- escrow-release (the payer approves), or the job when an inspection period ends (p_actor null).
-- Returns the escrow_payout transaction to start, if any.
create function private.escrow_release(p_escrow uuid, p_actor uuid, p_now timestamptz)
returns table (status text, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  r private.category_rules;
  v_remaining bigint;
  v_payout bigint;
  v_payout_tx uuid;
  v_transfer uuid;
begin
  if p_actor is not null and p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('only the payer can release this escrow');
  end if;
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'release');
  end if;
  select * into r from private.category_rules where category = e.category;
  if p_actor is not null and r.release_needs_delivery and e.delivered_at is null then
    raise exception 'release follows delivery for %: the % has not marked it delivered', e.category, r.payee_label
      using errcode = 'ES409';
  end if;
  if p_actor is null and not (e.status = 'inspection' and e.inspection_ends_at <= p_now) then
    perform private.refuse_state(e, 'auto-release');
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
$$;
comment on function private.escrow_release(uuid, uuid, timestamptz) is
  'escrow-release by the payer, or the job when an inspection period ends: pays out the rest and closes the escrow.';
revoke execute on function private.escrow_release(uuid, uuid, timestamptz) from public, anon, authenticated;
grant execute on function private.escrow_release(uuid, uuid, timestamptz) to service_role;

-- escrow-refund: the payee gives the money back.
create function private.escrow_refund(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_amount bigint;
begin
  if p_actor is distinct from private.payee_of(e) then
    perform private.refuse_role('only the payee can refund this escrow');
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
$$;
comment on function private.escrow_refund(uuid, uuid) is
  'escrow-refund by the payee: the hold goes back to the payer''s wallet and the escrow is refunded.';
revoke execute on function private.escrow_refund(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_refund(uuid, uuid) to service_role;

-- transfer.success for an escrow payout: the payee is told; the escrow is released already.
create function private.escrow_payout_settled(p_tx uuid, p_succeeded boolean)
returns void
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
begin
  select * into t from public.transactions where id = p_tx and type = 'escrow_payout';
  if not found or t.escrow_id is null then
    return;
  end if;
  perform private.notify(t.user_id, t.escrow_id, case when p_succeeded then 'payout_succeeded' else 'payout_failed' end,
    pg_catalog.jsonb_build_object('kind', case when p_succeeded then 'payout_succeeded' else 'payout_failed' end,
                                  'amount', t.amount),
    'transaction', t.id, 'View transaction');
end
$$;
comment on function private.escrow_payout_settled(uuid, boolean) is
  'Tells the payee how their escrow payout ended (reached the bank, or back in the wallet).';
revoke execute on function private.escrow_payout_settled(uuid, boolean) from public, anon, authenticated;
grant execute on function private.escrow_payout_settled(uuid, boolean) to service_role;
