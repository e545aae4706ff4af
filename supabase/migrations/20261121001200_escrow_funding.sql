-- =============================================================================================
-- Escrow funding: from the wallet, by card, by bank transfer into the payer's virtual account.
-- Every way of paying ends in private.escrow_mark_funded, which moves the escrow on (draft ->
-- active and the counterparty is invited; accepted -> funded). The escrow is always locked before
-- its transactions, the one lock order of every escrow operation.
-- =============================================================================================

-- =============================================================================================
-- Helpers
-- =============================================================================================

-- A user-facing transaction for an escrow movement (already settled unless p_status says otherwise).
-- p_message is what its description says, {kind, ...params} (shared/messages.ts renders it).
create function private.escrow_transaction(
  p_user uuid, p_escrow uuid, p_milestone uuid, p_type text, p_message jsonb, p_amount bigint,
  p_direction public.transaction_direction, p_provider text, p_status public.transaction_status, p_metadata jsonb
) returns uuid
language sql
set search_path = ''
as $$
  insert into public.transactions (user_id, type, category, message, amount, direction, status, escrow_id,
                                   milestone_id, provider, metadata, completed_at)
  values (p_user, p_type, 'escrow', p_message, p_amount, p_direction, p_status, p_escrow, p_milestone, p_provider,
          coalesce(p_metadata, '{}'::jsonb), case when p_status = 'pending' then null else now() end)
  returning id;
$$;
comment on function private.escrow_transaction(uuid, uuid, uuid, text, jsonb, bigint, public.transaction_direction,
  text, public.transaction_status, jsonb) is
  'Records a user-facing transaction (category escrow) for an escrow movement; returns its id.';
revoke execute on function private.escrow_transaction(uuid, uuid, uuid, text, jsonb, bigint,
  public.transaction_direction, text, public.transaction_status, jsonb)
  from public, anon, authenticated;
grant execute on function private.escrow_transaction(uuid, uuid, uuid, text, jsonb, bigint,
  public.transaction_direction, text, public.transaction_status, jsonb)
  to service_role;

-- Locks the escrow's funds (the hold now has total_charge) and moves the state on: draft -> active
-- (funded, the counterparty is invited: notification, and the invite SMS capped per phone), or
-- active and accepted -> funded. p_tx is the escrow's funding transaction, marked succeeded.
-- Called by every way of paying.
create function private.escrow_mark_funded(e public.escrows, p_tx uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_next text := case when e.status = 'draft' then 'active' else 'funded' end;
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
  'Locks an escrow''s funds and moves it on: draft -> active (the counterparty is invited, SMS capped per phone), or '
  'accepted -> funded.';
revoke execute on function private.escrow_mark_funded(public.escrows, uuid) from public, anon, authenticated;
grant execute on function private.escrow_mark_funded(public.escrows, uuid) to service_role;

create function private.escrow_fundable(e public.escrows, p_actor uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('only the payer can fund this escrow');
  end if;
  if not private.escrow_is_fundable(e) then
    perform private.refuse_state(e, 'fund');
  end if;
end
$$;
comment on function private.escrow_fundable(public.escrows, uuid) is
  'Refuses (ES403, ES409) unless the actor is the payer and the escrow is a draft or accepted but unfunded.';
revoke execute on function private.escrow_fundable(public.escrows, uuid) from public, anon, authenticated;
grant execute on function private.escrow_fundable(public.escrows, uuid) to service_role;

-- =============================================================================================
-- From the wallet
-- =============================================================================================

-- escrow-fund from the wallet: the payer's wallet -> the escrow's hold, in one transfer.
create function private.escrow_fund_wallet(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_tx uuid;
begin
  perform private.escrow_fundable(e, p_actor);
  -- an accepted escrow's payment request (escrow_accept) is the funding it asked for: paying it
  -- marks that transaction succeeded, rather than cancelling it and recording a second one
  select id into v_tx from public.transactions
   where escrow_id = e.id and user_id = p_actor and type = 'escrow_funding' and status = 'pending'
     and metadata ? 'payment_request' and not metadata ? 'kind'
   order by created_at limit 1;
  if v_tx is null then
    v_tx := private.escrow_transaction(p_actor, e.id, null, 'escrow_funding',
              pg_catalog.jsonb_build_object('kind', 'escrow_funding', 'title', e.title), e.total_charge, 'out',
              'wallet', 'pending',
              pg_catalog.jsonb_build_object('method', 'wallet', 'amount', e.amount, 'payer_fee', e.payer_fee, 'vat', e.vat));
  else
    update public.transactions set provider = 'wallet', metadata = metadata || pg_catalog.jsonb_build_object('method', 'wallet')
     where id = v_tx;
  end if;
  perform private.post_transfer('escrow-fund:' || e.id, 'escrow_funding',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_actor), 'amount', -e.total_charge),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', e.total_charge)),
    v_tx);
  return private.escrow_mark_funded(e, v_tx);
end
$$;
comment on function private.escrow_fund_wallet(uuid, uuid) is
  'escrow-fund from the wallet: the payer''s wallet to the escrow''s hold in one transfer, then the escrow is marked '
  'funded.';
revoke execute on function private.escrow_fund_wallet(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_fund_wallet(uuid, uuid) to service_role;

-- =============================================================================================
-- By card
-- =============================================================================================

-- escrow-fund by card: a pending funding transaction whose id is the charge reference.
create function private.escrow_charge_create(p_escrow uuid, p_actor uuid, p_provider text, p_method text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_tx uuid;
begin
  perform private.escrow_fundable(e, p_actor);
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
  'reference.';
revoke execute on function private.escrow_charge_create(uuid, uuid, text, text) from public, anon, authenticated;
grant execute on function private.escrow_charge_create(uuid, uuid, text, text) to service_role;

-- A card charge for an escrow that did not happen (declined, refused, abandoned): the pending
-- funding transaction is marked failed; nothing moved.
create function private.escrow_charge_fail(p_tx uuid, p_reason text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  update public.transactions
     set status = 'failed', completed_at = now(), metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', p_reason)
   where id = p_tx and type = 'escrow_funding' and status = 'pending';
  return case when found then 'failed' else 'already_done' end;
end
$$;
comment on function private.escrow_charge_fail(uuid, text) is
  'A card charge for an escrow that did not happen: the pending funding transaction is marked failed.';
revoke execute on function private.escrow_charge_fail(uuid, text) from public, anon, authenticated;
grant execute on function private.escrow_charge_fail(uuid, text) to service_role;

-- A confirmed card charge funding an escrow. Only exactly the escrow's total_charge is ever
-- credited: any other amount credits nothing (neither the hold nor the wallet), is flagged
-- (amount_mismatch) and leaves the funding transaction as it is (pending: under review). The
-- right amount goes into the hold when the escrow can still be funded; otherwise (the escrow was
-- cancelled, or funded another way) it is the payer's money, credited to the wallet.
-- Returns 'escrow:<status>', 'credited_to_wallet', 'already_done', 'flagged' or 'not_found'.
create function private.escrow_charge_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
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
  if t.status = 'succeeded' or t.metadata ? 'credited_to_wallet' then
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
  'A confirmed card charge for an escrow: exactly total_charge funds the hold (or, if no longer fundable, the '
  'payer''s wallet); any other amount credits nothing and is held for review.';
revoke execute on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) from public, anon, authenticated;
grant execute on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) to service_role;

-- =============================================================================================
-- By bank transfer
-- =============================================================================================

-- escrow-fund by bank transfer: the escrow waits for money in the payer's virtual account.
create function private.escrow_await_bank_transfer(p_escrow uuid, p_actor uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  perform private.escrow_fundable(e, p_actor);
  update public.escrows set awaiting_bank_transfer_at = now(), updated_at = now() where id = e.id;
end
$$;
comment on function private.escrow_await_bank_transfer(uuid, uuid) is
  'escrow-fund by bank transfer: marks the escrow as waiting for money in the payer''s virtual account.';
revoke execute on function private.escrow_await_bank_transfer(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_await_bank_transfer(uuid, uuid) to service_role;

-- A bank transfer of p_received kobo into p_user's virtual account: the wallet is credited (once
-- per provider charge id), and the oldest escrow waiting for a bank transfer from that payer is
-- funded from the wallet when the wallet now covers it; otherwise the payer is told the shortfall
-- by SMS and notification and the escrow stays as it is. The shortfall SMS names amounts and the
-- category, not the title (which the payer may not have written: the initiator titles an escrow
-- the counterparty pays). The waiting escrow is locked before the wallet is touched, the order
-- every escrow operation follows, so this cannot deadlock with a payer funding the same escrow at
-- the same moment.
create function private.bank_transfer_received(
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
    return 'deposit';
  end if;
  select * into e from public.escrows where id = v_id;
  select balance into v_balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user;
  if coalesce(v_balance, 0) >= e.total_charge then
    return 'deposit:escrow:' || private.escrow_fund_wallet(e.id, p_user);
  end if;
  select phone into v_phone from private.users where id = p_user;
  perform private.queue_sms(v_phone, pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
    'received', p_received, 'category', e.category, 'total_charge', e.total_charge,
    'shortfall', e.total_charge - coalesce(v_balance, 0)));
  perform private.notify(p_user, e.id, 'funding_shortfall', pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
    'title', e.title, 'received', p_received, 'shortfall', e.total_charge - coalesce(v_balance, 0)),
    'escrow', e.id, 'Fund escrow');
  return 'deposit:shortfall';
end
$$;
comment on function private.bank_transfer_received(uuid, bigint, text, text, jsonb) is
  'A bank transfer into a virtual account: credits the wallet once, funds the oldest waiting escrow when covered, '
  'else tells the payer the shortfall.';
revoke execute on function private.bank_transfer_received(uuid, bigint, text, text, jsonb)
  from public, anon, authenticated;
grant execute on function private.bank_transfer_received(uuid, bigint, text, text, jsonb) to service_role;
