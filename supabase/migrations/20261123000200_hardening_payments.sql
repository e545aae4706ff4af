-- =============================================================================================
-- Hardening (issue 8, item 2): value only for what the provider confirms.
--
-- A card charge (a wallet top-up, or a charge funding an escrow) credits exactly the amount its
-- pending transaction expects, never the amount an event claims. A different amount credits
-- nothing: it is recorded in private.payment_flags and the transaction stays pending, marked
-- `review` in its metadata, until the provider's own answer settles it (webhook-payments asks
-- Paystack's verify before it calls these functions, reconciliation asks again later). These
-- functions are the last line: whatever TypeScript passes, a wrong amount is never credited.
-- =============================================================================================

-- Records a card charge that cannot be credited as it stands (reason: amount_mismatch,
-- currency_mismatch, ...): one row in private.payment_flags, and, when the transaction is still
-- pending, metadata.review = {reason, expected_amount, received_amount, provider_status,
-- flagged_at}. provider_status is what the provider's verify said (null: not asked, or no
-- answer); 'success' means the provider's answer is final and disagrees, so reconciliation stops
-- asking and an operator decides. Nothing is credited and the status does not change.
-- Returns 'held_for_review' (pending, marked), 'flagged' (already closed) or 'not_found'.
create function private.charge_hold_for_review(
  p_tx uuid, p_reason text, p_received bigint, p_provider_status text, p_payload jsonb
) returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  v_expected bigint;
begin
  -- only the transaction row is locked (never the escrow), so this cannot invert the
  -- escrow-then-transaction lock order of the escrow operations
  select * into t from public.transactions
   where id = p_tx and type in ('wallet_topup', 'escrow_funding') for update;
  if not found then
    return 'not_found';
  end if;
  if t.type = 'escrow_funding' then
    select total_charge into v_expected from public.escrows where id = t.escrow_id;
  else
    v_expected := t.amount;
  end if;
  insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
  values (p_reason, t.id, t.id::text, v_expected, p_received, coalesce(p_payload, '{}'::jsonb));
  if t.status <> 'pending' then
    return 'flagged';
  end if;
  update public.transactions
     set metadata = metadata || pg_catalog.jsonb_build_object('review', pg_catalog.jsonb_build_object(
           'reason', p_reason, 'expected_amount', v_expected, 'received_amount', p_received,
           'provider_status', p_provider_status, 'flagged_at', now()))
   where id = t.id;
  return 'held_for_review';
end
$$;
comment on function private.charge_hold_for_review(uuid, text, bigint, text, jsonb) is
  'A card charge that cannot be credited as it stands: flagged in private.payment_flags and, while pending, marked metadata.review; credits nothing.';

-- Completes a pending top-up on a confirmed charge. Credits exactly the pending amount: a
-- received amount other than that credits nothing, is flagged (amount_mismatch) and leaves the
-- top-up pending under review. A charge for a top-up already failed or canceled is flagged, not
-- credited. Returns 'succeeded', 'already_done', 'flagged' or 'not_found'.
create or replace function private.topup_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
begin
  select * into t from public.transactions where id = p_tx and type = 'wallet_topup' for update;
  if not found then
    return 'not_found';
  end if;
  if t.status in ('failed', 'canceled') then
    -- money arrived for a top-up we had already closed: not credited, but kept for an operator
    insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
    values ('charge_for_closed_transaction', t.id, t.id::text, t.amount, p_received, p_payload);
    return 'flagged';
  end if;
  if t.status <> 'pending' then
    return 'already_done';
  end if;
  if p_received is null or p_received <> t.amount then
    perform private.charge_hold_for_review(t.id, 'amount_mismatch', p_received, null, p_payload);
    return 'flagged';
  end if;
  update public.transactions
     set status = 'succeeded', completed_at = now(), provider_charge_id = p_charge_id, metadata = metadata - 'review'
   where id = t.id;
  perform private.post_transfer(
    'topup:' || t.id, 'wallet_topup',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -t.amount),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', t.user_id), 'amount', t.amount)),
    t.id);
  return 'succeeded';
end
$$;
comment on function private.topup_succeed(uuid, bigint, text, jsonb) is
  'Completes a pending top-up crediting exactly its amount; any other received amount credits nothing and is held for review.';

-- A confirmed card charge funding an escrow. Only exactly the escrow's total_charge is ever
-- credited: any other amount credits nothing (neither the hold nor the wallet), is flagged
-- (amount_mismatch) and leaves the funding transaction as it is (pending: under review). The
-- right amount goes into the hold when the escrow can still be funded; otherwise (the escrow was
-- cancelled, or funded another way) it is the payer's money, credited to the wallet.
-- Returns 'escrow:<status>', 'credited_to_wallet', 'already_done', 'flagged' or 'not_found'.
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
  if t.status = 'succeeded' or t.metadata ? 'credited_to_wallet' then
    return 'already_done';
  end if;
  if p_received is null or p_received <> e.total_charge then
    perform private.charge_hold_for_review(t.id, 'amount_mismatch', p_received, null, p_payload);
    return 'flagged';
  end if;
  update public.transactions set provider_charge_id = p_charge_id, metadata = metadata - 'review' where id = t.id;
  if t.status = 'pending' and (e.status = 'draft' or (e.status = 'active' and e.funded_at is null)) then
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
  'A confirmed card charge for an escrow: exactly total_charge funds the hold (or, if no longer fundable, the payer''s wallet); any other amount credits nothing and is held for review.';

-- create or replace keeps a function's grants; they are stated again so that this file alone
-- says who may call what. Only service_role (webhooks, jobs) ever executes these.
revoke execute on function
  private.charge_hold_for_review(uuid, text, bigint, text, jsonb),
  private.topup_succeed(uuid, bigint, text, jsonb),
  private.escrow_charge_succeed(uuid, bigint, text, jsonb)
  from public, anon, authenticated;
grant execute on function
  private.charge_hold_for_review(uuid, text, bigint, text, jsonb),
  private.topup_succeed(uuid, bigint, text, jsonb),
  private.escrow_charge_succeed(uuid, bigint, text, jsonb)
  to service_role;
