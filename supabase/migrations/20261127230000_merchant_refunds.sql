-- =============================================================================================
-- Merchant escrows, money part 2: what goes back to a merchant escrow's buyer goes back through
-- the payments provider, to the card or account the checkout charged, never to a wallet
-- (docs/merchants.md, "Refunds to the buyer").
--
-- - private.escrow_pay_back is the one place where money leaves a hold for the payer: an app
--   escrow's payer is credited in the wallet at once (as before); a merchant escrow's payer gets a
--   pending escrow_refund transaction naming the charge it refunds (charge_reference, the
--   provider's reference of the checkout's charge) and the channel that charge came by, and the
--   money moves from the hold to provider_clearing (as a payout's does). The caller hands the
--   refund to the provider after the commit (shared/money/refunds.ts).
-- - escrow_return_hold (escrow-refund, the cancel and decline of a funded escrow, a dispute
--   settled by refund) and the refund part of dispute_settle_split call it.
-- - A charge that arrives after its merchant escrow was cancelled or expired (refund_due) gets the
--   same pending refund of the whole charge. That charge never entered a hold, and nothing is
--   posted for it: the money arrives at the provider and leaves it again by the refund, so the
--   ledger never holds it; the refund transaction (with no ledger transfer) is its record.
-- - At most one refund per charge (a unique index), and so per escrow: the refund webhooks name
--   the charge, not a refund of ours, and this is what they are matched by.
-- - private.escrow_refund_settle applies refund.processed (the amount verified; succeeded once),
--   refund.failed (failed and held for an operator's review: the money stays booked in
--   provider_clearing, nothing goes to a wallet) and refund.pending / refund.processing (noted).
-- - escrow-fund refuses a merchant escrow (merchant_escrow_checkout_only): its money comes only
--   through the checkout, so there is always a charge to refund.
-- - The checkout's charge keeps the channel it was paid by (metadata.channel).
-- =============================================================================================

-- one refund per charge: what the refund webhooks are matched by
create unique index transactions_refund_charge_idx on public.transactions ((metadata ->> 'charge_reference'))
  where type = 'escrow_refund' and metadata ? 'charge_reference';
-- the job's look for refunds to send or to check
create index transactions_refund_pending_idx on public.transactions (created_at)
  where type = 'escrow_refund' and status = 'pending' and metadata ? 'charge_reference';

-- ---- paying the payer back ---------------------------------------------------------------------

create function private.escrow_pay_back(e public.escrows, p_amount bigint, p_key text, p_message jsonb,
                                        p_metadata jsonb)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_payer uuid := private.payer_of(e);
  v_charge public.transactions;
  v_tx uuid;
begin
  if p_amount <= 0 then
    return null;
  end if;
  if e.merchant_id is null then
    -- an app escrow: back to the payer's wallet, at once
    v_tx := private.escrow_transaction(v_payer, e.id, null, 'escrow_refund', p_message, p_amount, 'in', 'wallet',
                                       'succeeded', coalesce(p_metadata, '{}'::jsonb));
    perform private.post_transfer(p_key, 'escrow_refund',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -p_amount),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payer), 'amount', p_amount)),
      v_tx);
    return v_tx;
  end if;
  -- a merchant escrow: back to where the checkout's charge came from, through the provider
  select * into v_charge from public.transactions
   where escrow_id = e.id and type = 'escrow_funding' and status = 'succeeded'
     and metadata ->> 'kind' = 'escrow_charge'
   order by created_at desc limit 1;
  if not found then
    -- an assertion: escrow-fund refuses merchant escrows, so their money came from a charge
    raise exception 'merchant escrow % holds money of no provider charge', e.id;
  end if;
  v_tx := private.escrow_transaction(v_payer, e.id, null, 'escrow_refund', p_message, p_amount, 'in',
            v_charge.provider, 'pending',
            coalesce(p_metadata, '{}'::jsonb) || pg_catalog.jsonb_build_object(
              'refund_to', 'provider', 'charge_reference', v_charge.id, 'channel', v_charge.metadata ->> 'channel'));
  perform private.post_transfer(p_key, 'escrow_refund',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;
comment on function private.escrow_pay_back(public.escrows, bigint, text, jsonb, jsonb) is
  'Money out of an escrow''s hold for its payer: an app escrow''s to the payer''s wallet (a succeeded refund); a merchant escrow''s to provider_clearing with a pending refund naming the charge (charge_reference) and its channel, to be sent to the provider after the commit. Returns the refund transaction.';
revoke all on function private.escrow_pay_back(public.escrows, bigint, text, jsonb, jsonb) from public;
grant execute on function private.escrow_pay_back(public.escrows, bigint, text, jsonb, jsonb) to service_role;

create or replace function private.escrow_return_hold(e public.escrows, p_message jsonb)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_hold bigint;
begin
  select balance into v_hold from private.ledger_accounts where kind = 'escrow_hold' and owner_id = e.id for update;
  if coalesce(v_hold, 0) = 0 then
    return 0;
  end if;
  perform private.escrow_pay_back(e, v_hold, 'escrow-refund:' || e.id, p_message, '{}'::jsonb);
  return v_hold;
end
$$;
comment on function private.escrow_return_hold(public.escrows, jsonb) is
  'Returns whatever is left in an escrow''s hold to its payer (private.escrow_pay_back: the wallet, or for a merchant escrow a refund through the provider); returns the amount.';
revoke all on function private.escrow_return_hold(public.escrows, jsonb) from public;
grant execute on function private.escrow_return_hold(public.escrows, jsonb) to service_role;

-- The split: only its refund part changes (the payer's part through private.escrow_pay_back).
create or replace function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid)
 RETURNS record
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_remaining bigint := e.amount - e.released_amount;
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
  -- the payer's part: the wallet (an app escrow) or a refund through the provider (a merchant's)
  perform private.escrow_pay_back(e, payer_gets, 'dispute-refund:' || d.id,
    pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title),
    pg_catalog.jsonb_build_object('dispute_id', d.id, 'refunded_amount', v_remaining - p_payee_amount,
                                  'payer_fee', v_payer_fee_back, 'vat', v_vat_back));
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
comment on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) is 'A dispute settled by a split: R - P with the payer fee and VAT on it back to the payer (private.escrow_pay_back: the wallet, or a merchant escrow''s refund through the provider), P less the seller fee to the payee, the VAT on P to VAT and the rest to the platform; the escrow released with P. Answers what each party received and the release part''s transfer. Called by private.dispute_settle under its locks.';
revoke all on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) from public;
grant execute on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) to service_role;

-- ---- a charge after cancel or expiry -------------------------------------------------------------

create or replace function private.escrow_charge_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  e public.escrows;
  v_escrow uuid;
  v_channel text := p_payload -> 'data' ->> 'channel';
  v_refund uuid;
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
  -- the channel the buyer paid by is where a refund goes back to
  update public.transactions
     set provider_charge_id = p_charge_id,
         metadata = (metadata - 'review') || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object('channel', v_channel))
   where id = t.id;
  if t.status = 'pending' and private.escrow_is_fundable(e) then
    perform private.post_transfer('escrow-fund:' || e.id, 'escrow_funding',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', -e.total_charge),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', e.total_charge)),
      t.id);
    return 'escrow:' || private.escrow_mark_funded(e, t.id);
  end if;
  if e.merchant_id is not null then
    -- A merchant escrow's buyer paid after it was cancelled or expired: the whole charge goes back
    -- to the card or account it came from, never to a wallet. Nothing is posted: the money never
    -- entered a hold, and it leaves the provider as it came (the refund has no ledger transfer).
    v_refund := private.escrow_transaction(t.user_id, e.id, null, 'escrow_refund',
                  pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title), e.total_charge, 'in',
                  t.provider, 'pending',
                  pg_catalog.jsonb_build_object('refund_to', 'provider', 'charge_reference', t.id,
                                                'channel', v_channel, 'late_payment', true));
    update public.transactions
       set status = 'failed', completed_at = now(),
           metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', 'escrow no longer fundable',
             'received_amount', e.total_charge, 'refund_due', true, 'refund_tx', v_refund)
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
  'A confirmed card charge for an escrow: exactly total_charge funds the hold (its channel kept); if the escrow is no longer fundable, the payer''s wallet (an app escrow) or, for a merchant escrow, a pending refund of the whole charge through the provider (refund_due; nothing posted: it never entered a hold); any other amount credits nothing and is held for review.';
revoke all on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) from public;
grant execute on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) to service_role;

-- ---- the provider's answer -----------------------------------------------------------------------

create function private.escrow_refund_settle(p_charge_reference text, p_event text, p_amount bigint,
                                             p_currency text, p_refund_reference text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
begin
  select * into t from public.transactions
   where type = 'escrow_refund' and metadata ? 'charge_reference' and metadata ->> 'charge_reference' = p_charge_reference
     for update;
  if not found then
    return 'not_found';
  end if;
  if t.status <> 'pending' then
    return 'already_done';
  end if;
  if p_event = 'refund.processed' then
    if p_amount is distinct from t.amount or p_currency is distinct from 'NGN' then
      -- a refund of another amount than ours: nothing settled, an operator looks at it
      insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount,
                                         payload)
      values (case when p_currency is distinct from 'NGN' then 'refund_currency_mismatch' else 'refund_amount_mismatch' end,
              t.id, p_charge_reference, t.amount, p_amount, coalesce(p_payload, '{}'::jsonb));
      update public.transactions
         set metadata = metadata || pg_catalog.jsonb_build_object('review', pg_catalog.jsonb_build_object(
               'reason', 'refund_amount_mismatch', 'received_amount', p_amount, 'currency', p_currency))
       where id = t.id;
      return 'flagged';
    end if;
    update public.transactions
       set status = 'succeeded', completed_at = now(),
           metadata = (metadata - 'review') || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
             'refund_reference', p_refund_reference, 'provider_status', 'processed'))
     where id = t.id;
    return 'succeeded';
  elsif p_event = 'refund.failed' then
    -- The money stays booked where the refund put it (provider_clearing for a hold's refund) and
    -- nothing is credited to a wallet: an operator decides (retry with the customer's account
    -- details at the provider, or another way), from the flag and the transaction's review.
    update public.transactions
       set status = 'failed', completed_at = now(),
           metadata = metadata || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
             'failure_reason', 'refund failed at the provider', 'refund_reference', p_refund_reference,
             'provider_status', 'failed', 'review', pg_catalog.jsonb_build_object('reason', 'refund_failed')))
     where id = t.id;
    insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount,
                                       payload)
    values ('refund_failed', t.id, p_charge_reference, t.amount, p_amount, coalesce(p_payload, '{}'::jsonb));
    return 'failed';
  end if;
  -- refund.pending / refund.processing: on its way
  update public.transactions
     set metadata = metadata || pg_catalog.jsonb_build_object('provider_status', pg_catalog.split_part(p_event, '.', 2))
   where id = t.id;
  return 'pending';
end
$$;
comment on function private.escrow_refund_settle(text, text, bigint, text, text, jsonb) is
  'A refund''s outcome from the provider (webhook or lookup), by the charge it refunds: refund.processed of the refund''s amount in NGN succeeds it once (another amount is flagged, nothing settled); refund.failed fails it and holds it for review (the money stays booked, no wallet credited); pending/processing are noted. Answers succeeded, failed, pending, flagged, already_done or not_found.';
revoke all on function private.escrow_refund_settle(text, text, bigint, text, text, jsonb) from public;
grant execute on function private.escrow_refund_settle(text, text, bigint, text, text, jsonb) to service_role;

-- ---- escrow-fund: never for a merchant escrow ----------------------------------------------------

create or replace function private.escrow_fundable(e public.escrows, p_actor uuid)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  if p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('fund', 'payer');
  end if;
  -- a merchant escrow is paid through its checkout only, so its money can always be refunded there
  if e.merchant_id is not null then
    perform private.refuse(409, 'merchant_escrow_checkout_only', pg_catalog.jsonb_build_object('escrow_id', e.id));
  end if;
  if not private.escrow_is_fundable(e) then
    perform private.refuse_state(e, 'fund');
  end if;
end
$function$;
comment on function private.escrow_fundable(e public.escrows, p_actor uuid) is 'Refuses (ES403, ES409) unless the actor is the payer and the escrow is a draft or accepted but unfunded; a merchant escrow is paid through its checkout only (merchant_escrow_checkout_only).';
revoke all on function private.escrow_fundable(e public.escrows, p_actor uuid) from public;
grant execute on function private.escrow_fundable(e public.escrows, p_actor uuid) to service_role;
