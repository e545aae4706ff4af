-- =============================================================================================
-- Merchant escrows, second part: funding through the payments provider's hosted checkout, expiry
-- of unfunded ones, and delivery by the merchant with tracking (docs/merchants.md)
--
-- - The checkout. merchant-escrow-create records the buyer's card charge like escrow-fund's (a
--   pending escrow_funding transaction of kind escrow_charge whose id is the provider's reference),
--   but it is the merchant owner's limits that it meets: the owner's single limit, and the owner's
--   daily sum, which counts the charge (metadata.limit_user, kept out of the buyer's own sum). The
--   checkout page's URL is kept with the escrow, so a replay of the request answers the same one.
-- - The payments webhook funds it by the card path (private.escrow_charge_succeed): a merchant
--   escrow goes from draft straight to funded (private.escrow_mark_funded), with no accept step.
-- - A payment for a merchant escrow that was cancelled or expired before it arrived is recorded
--   (refund_due) and credits no wallet: the money goes back through the provider (a later part).
-- - private.merchant_escrows_expire cancels the drafts older than MERCHANT_ESCROW_EXPIRY_HOURS
--   (given by the job).
-- - private.merchant_escrow_deliver records delivery as the seller's escrow-deliver does (the
--   category's inspection starts), with the merchant's tracking.
-- =============================================================================================

alter table private.merchant_escrows
  -- no foreign key: the function that writes it made that transaction (an index for the key would
  -- serve no query, and the advisors report both an unindexed key and an unused index)
  add column checkout_tx uuid,
  add column checkout_url text,
  add column tracking jsonb;
comment on column private.merchant_escrows.checkout_tx is
  'The buyer''s pending charge whose checkout page checkout_url is (its id is the provider''s reference).';
comment on column private.merchant_escrows.checkout_url is
  'The payments provider''s hosted checkout of checkout_tx, answered again on a replay.';
comment on column private.merchant_escrows.tracking is
  'The shipment the merchant named when it marked the escrow delivered: {carrier, number, url?}.';

-- the owner's daily sum finds the charges of its merchants' escrows by this
create index transactions_limit_user_idx on public.transactions ((metadata ->> 'limit_user'), created_at)
  where metadata ? 'limit_user';

-- ---- the daily sum -------------------------------------------------------------------------------

create or replace function private.kyc_used_today(p_user uuid, p_now timestamptz)
returns bigint
language sql
stable
set search_path = ''
as $$
  -- money moved into the service (card top-ups, bank transfers in, card fundings of escrows) and
  -- out of it (withdrawals and escrow payouts to the bank), pending or done, since 00:00 Lagos; a
  -- wallet funding moves money already counted, and an escrow's payment request is not a charge.
  -- A charge whose limits are another user's (a merchant escrow's checkout: its owner, limit_user)
  -- counts for that user, not for the payer.
  select coalesce((select sum(t.amount)
                     from public.transactions t
                    where t.user_id = p_user
                      and not t.metadata ? 'limit_user'
                      and t.created_at >= private.lagos_day_start(p_now)
                      and t.status in ('pending', 'succeeded')
                      and (t.type in ('wallet_topup', 'virtual_account_deposit', 'withdrawal', 'escrow_payout')
                           or (t.type = 'escrow_funding' and t.metadata ->> 'kind' = 'escrow_charge'))), 0)::bigint
       + coalesce((select sum(t.amount)
                     from public.transactions t
                    where t.metadata ? 'limit_user' and t.metadata ->> 'limit_user' = p_user::text
                      and t.created_at >= private.lagos_day_start(p_now)
                      and t.status in ('pending', 'succeeded')
                      and t.type = 'escrow_funding' and t.metadata ->> 'kind' = 'escrow_charge'), 0)::bigint;
$$;
comment on function private.kyc_used_today(uuid, timestamptz) is
  'What counts toward the user''s daily limit today (Africa/Lagos): top-ups, bank transfers in, card fundings, withdrawals and escrow payouts, pending or succeeded, in kobo; a merchant escrow''s checkout charge counts for the merchant''s owner (metadata.limit_user), not for its payer.';
revoke all on function private.kyc_used_today(uuid, timestamptz) from public;
grant execute on function private.kyc_used_today(uuid, timestamptz) to service_role;

-- ---- the checkout's charge -----------------------------------------------------------------------

create function private.merchant_escrow_checkout(p_escrow uuid, p_merchant uuid, p_provider text)
returns table(transaction_id uuid, amount bigint, checkout_url text)
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows;
  me private.merchant_escrows;
  v_owner uuid;
  v_tx uuid;
begin
  select * into e from public.escrows where id = p_escrow for update;
  if not found or e.merchant_id is distinct from p_merchant then
    perform private.refuse(404, 'escrow_not_found', '{}'::jsonb);
  end if;
  -- funded, cancelled or expired: there is nothing left to pay
  if e.status <> 'draft' or e.funded_at is not null then
    return;
  end if;
  select * into me from private.merchant_escrows where escrow_id = e.id for update;
  -- the charge already started (a replay): its page again
  if me.checkout_tx is not null
     and exists (select 1 from public.transactions where id = me.checkout_tx and status = 'pending') then
    return query select me.checkout_tx, e.total_charge, me.checkout_url;
    return;
  end if;
  select m.owner_id into v_owner from private.merchants m where m.id = p_merchant;
  -- the owner's single limit and daily sum (serialised per owner until commit, where it is counted)
  perform private.kyc_limit_check(v_owner, e.total_charge, 'escrow_charge', 'amount');
  v_tx := private.escrow_transaction(e.initiator_id, e.id, null, 'escrow_funding',
            pg_catalog.jsonb_build_object('kind', 'escrow_funding', 'title', e.title), e.total_charge, 'out',
            p_provider, 'pending',
            pg_catalog.jsonb_build_object('method', 'checkout', 'kind', 'escrow_charge', 'amount', e.amount,
                                          'payer_fee', e.payer_fee, 'vat', e.vat, 'limit_user', v_owner));
  update private.merchant_escrows set checkout_tx = v_tx, checkout_url = null where escrow_id = e.id;
  return query select v_tx, e.total_charge, null::text;
end
$$;
comment on function private.merchant_escrow_checkout(uuid, uuid, text) is
  'The buyer''s checkout charge of a merchant''s draft escrow: the pending one already started (with its page), or a new pending escrow_charge transaction within the merchant owner''s single and daily limits (kyc_limit_exceeded otherwise), counted for the owner; no row once the escrow is funded or closed; escrow_not_found for another merchant''s.';
revoke all on function private.merchant_escrow_checkout(uuid, uuid, text) from public;
grant execute on function private.merchant_escrow_checkout(uuid, uuid, text) to service_role;

create function private.merchant_escrow_checkout_started(p_escrow uuid, p_tx uuid, p_url text)
returns void
language sql
set search_path = ''
as $$
  update private.merchant_escrows set checkout_url = p_url where escrow_id = p_escrow and checkout_tx = p_tx;
$$;
comment on function private.merchant_escrow_checkout_started(uuid, uuid, text) is
  'Keeps the checkout page the provider gave for the escrow''s charge, for the request''s replays.';
revoke all on function private.merchant_escrow_checkout_started(uuid, uuid, text) from public;
grant execute on function private.merchant_escrow_checkout_started(uuid, uuid, text) to service_role;

-- ---- funding: draft -> funded --------------------------------------------------------------------

create or replace function private.escrow_mark_funded(e public.escrows, p_tx uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  -- an app escrow's draft waits for its counterparty's acceptance; a merchant's has no accept step
  v_next text := case when e.status = 'draft' and e.merchant_id is null then 'active' else 'funded' end;
  v_payer uuid := private.payer_of(e);
  v_name text;
begin
  update public.transactions set status = 'succeeded', completed_at = now() where id = p_tx and status = 'pending';
  -- a payment request that another way of paying overtook is withdrawn
  update public.transactions set status = 'canceled', completed_at = now()
   where escrow_id = e.id and user_id = v_payer and type = 'escrow_funding' and status = 'pending' and id <> p_tx;
  update public.escrows set status = v_next, funded_at = now(), awaiting_bank_transfer_at = null, updated_at = now()
   where id = e.id;
  perform private.notify(v_payer, e.id, 'funded',
    pg_catalog.jsonb_build_object('kind', 'funded_payer', 'title', e.title, 'total_charge', e.total_charge),
    'escrow', e.id, 'View escrow');
  if v_next = 'active' then
    select first_name || ' ' || last_name into v_name from public.profiles where id = e.initiator_id;
    perform private.notify(e.counterparty_id, e.id, 'invite_received',
      pg_catalog.jsonb_build_object('kind', 'invite_received_funded', 'inviter', v_name, 'title', e.title,
                                    'amount', e.amount),
      'escrow', e.id, 'Review invitation');
    perform private.queue_invite_sms(e);
  else
    perform private.notify(private.payee_of(e), e.id, 'funded',
      pg_catalog.jsonb_build_object('kind', 'funded_payee', 'title', e.title, 'amount', e.amount),
      'escrow', e.id, 'View escrow');
  end if;
  return v_next;
end
$$;
comment on function private.escrow_mark_funded(public.escrows, uuid) is
  'Locks an escrow''s funds and moves it on: an app escrow''s draft -> active (the counterparty is invited, SMS capped per phone); a merchant escrow''s draft, or an accepted one, -> funded.';
revoke all on function private.escrow_mark_funded(public.escrows, uuid) from public;
grant execute on function private.escrow_mark_funded(public.escrows, uuid) to service_role;

create or replace function private.escrow_charge_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  e public.escrows;
  v_escrow uuid;
begin
  -- the escrow first, then its transaction: the lock order of every escrow operation (they lock
  -- the escrow, then change its transactions), so a charge racing a cancel cannot deadlock
  select escrow_id into v_escrow from public.transactions where id = p_tx and type = 'escrow_funding';
  if not found then
    return 'not_found';
  end if;
  e := private.escrow_lock(v_escrow, null);
  select * into t from public.transactions where id = p_tx for update;
  if t.status = 'succeeded' or t.metadata ? 'credited_to_wallet' or t.metadata ? 'refund_due' then
    return 'already_done';
  end if;
  if p_received is null or p_received <> e.total_charge then
    perform private.charge_hold_for_review(t.id, 'amount_mismatch', p_received, null, p_payload);
    return 'flagged';
  end if;
  update public.transactions set provider_charge_id = p_charge_id, metadata = metadata - 'review' where id = t.id;
  if t.status = 'pending' and private.escrow_is_fundable(e) then
    perform private.post_transfer('escrow-fund:' || e.id, 'escrow_funding',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', -e.total_charge),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', e.total_charge)),
      t.id);
    return 'escrow:' || private.escrow_mark_funded(e, t.id);
  end if;
  if e.merchant_id is not null then
    -- A merchant escrow's buyer paid after it was cancelled or expired: the money goes back to the
    -- card or account it came from, never to a wallet. Recorded here, with nothing posted: it stays
    -- in provider_clearing.
    -- TODO(merchant refunds): refund it through the provider by this charge's reference (and post
    -- provider_clearing's side of it) once the payments provider has refunds.
    update public.transactions
       set status = 'failed', completed_at = now(),
           metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', 'escrow no longer fundable',
             'received_amount', e.total_charge, 'refund_due', true)
     where id = t.id;
    return 'refund_due';
  end if;
  -- The expected money, but the escrow can no longer take it: it is the payer's, in the wallet.
  update public.transactions
     set status = 'failed', completed_at = now(),
         metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', 'escrow no longer fundable',
           'received_amount', e.total_charge, 'credited_to_wallet', true)
   where id = t.id;
  perform private.virtual_account_deposit(t.user_id, e.total_charge, t.provider, 'escrow-charge:' || coalesce(p_charge_id, t.id::text),
    pg_catalog.jsonb_build_object('escrow_id', e.id, 'reason', 'escrow charge not applied'));
  return 'credited_to_wallet';
end
$$;
comment on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) is
  'A confirmed card charge for an escrow: exactly total_charge funds the hold; if the escrow is no longer fundable, the payer''s wallet (an app escrow) or, for a merchant escrow, nothing: the charge is recorded refund_due, to go back through the provider; any other amount credits nothing and is held for review.';
revoke all on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) from public;
grant execute on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) to service_role;

-- ---- expiry --------------------------------------------------------------------------------------

create function private.merchant_escrows_expire(p_now timestamptz, p_hours integer)
returns setof uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows;
begin
  -- each under its row lock and only while still an unfunded draft: a payment or a cancel that
  -- holds the escrow now is left to finish, and the next run sees what it did
  for e in
    select * from public.escrows x
     where x.merchant_id is not null and x.status = 'draft' and x.funded_at is null
       and x.created_at <= p_now - pg_catalog.make_interval(hours => p_hours)
     order by x.created_at
       for update skip locked
  loop
    perform private.escrow_close_unfunded(e, 'cancelled');
    return next e.id;
  end loop;
end
$$;
comment on function private.merchant_escrows_expire(timestamptz, integer) is
  'The job: cancels the merchant escrows still unfunded drafts p_hours (MERCHANT_ESCROW_EXPIRY_HOURS) after their creation; their pending charges are canceled, so a payment that still arrives is refund_due.';
revoke all on function private.merchant_escrows_expire(timestamptz, integer) from public;
grant execute on function private.merchant_escrows_expire(timestamptz, integer) to service_role;

-- ---- delivery ------------------------------------------------------------------------------------

create function private.merchant_escrow_deliver(p_escrow uuid, p_merchant uuid, p_tracking jsonb, p_now timestamptz)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows;
  v_status text;
begin
  select * into e from public.escrows where id = p_escrow for update;
  -- another merchant's escrow, or an app escrow, is unknown to this merchant
  if not found or e.merchant_id is distinct from p_merchant then
    perform private.refuse(404, 'escrow_not_found', '{}'::jsonb);
  end if;
  if e.status <> 'funded' or e.delivered_at is not null then
    perform private.refuse_state(e, 'deliver');
  end if;
  -- the seller's own delivery: the category's inspection starts
  v_status := private.escrow_deliver(e.id, private.payee_of(e), p_now);
  update private.merchant_escrows set tracking = p_tracking where escrow_id = e.id;
  return v_status;
end
$$;
comment on function private.merchant_escrow_deliver(uuid, uuid, jsonb, timestamptz) is
  'merchant-escrow-deliver: records the delivery of the merchant''s funded escrow as its seller''s escrow-deliver does (the category''s inspection starts) and keeps the tracking; escrow_not_found for another''s, escrow_wrong_state unless funded and not yet delivered.';
revoke all on function private.merchant_escrow_deliver(uuid, uuid, jsonb, timestamptz) from public;
grant execute on function private.merchant_escrow_deliver(uuid, uuid, jsonb, timestamptz) to service_role;
