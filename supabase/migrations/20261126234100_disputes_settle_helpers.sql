-- =============================================================================================
-- Dispute settlement, one function per outcome (the money moves exactly as before)
--
-- private.dispute_settle (20261124000400_disputes) held the money of all three outcomes in one
-- function of some 130 lines. Each outcome's money is now a function of its own, called by
-- dispute_settle under the locks it takes first (both users' transaction locks, then every
-- account the settlement may touch, in id order): private.dispute_settle_release,
-- private.dispute_settle_refund and private.dispute_settle_split each empty what the hold still
-- has (R = amount - released_amount), close the escrow, and answer what each party received (and
-- the transfer of a release). dispute_settle keeps the split's check, the locks, the milestones,
-- the payout, the dispute's record and the notices. The transfers, their keys, amounts and
-- transactions are the same; the hold still ends at exactly 0, and a dispute is settled once (the
-- callers hold the escrow's lock and the open dispute's row, as before).
-- =============================================================================================

-- =============================================================================================
-- The outcomes (called by private.dispute_settle only, with its locks held)
-- =============================================================================================

-- release: what the hold still has is paid out as an escrow release (private.escrow_pay_out: the
-- payee's wallet, the fees and VAT on it); the escrow is released. payee_gets: what the payee's
-- wallet received; transfer_id: the release's transfer (none when nothing was held).
create function private.dispute_settle_release(
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
  payee_gets := v_remaining - private.escrow_release_share(e, e.seller_fee, v_remaining);
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

-- refund: the whole hold back to the payer's wallet (private.escrow_return_hold); the escrow is
-- refunded. payer_gets: what the payer's wallet received; no transfer is answered (milestones are
-- cancelled, not paid).
create function private.dispute_settle_refund(
  e public.escrows, p_now timestamptz,
  out payee_gets bigint, out payer_gets bigint, out transfer_id uuid
)
language plpgsql
set search_path = ''
as $$
begin
  payer_gets := private.escrow_return_hold(e, pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title));
  payee_gets := 0;
  update public.escrows set status = 'refunded', refunded_at = p_now, updated_at = now() where id = e.id;
end
$$;
comment on function private.dispute_settle_refund(public.escrows, timestamptz) is
  'A dispute settled by refund: the whole hold back to the payer''s wallet, the escrow refunded. '
  'Answers what each party received. Called by private.dispute_settle under its locks.';
revoke execute on function private.dispute_settle_refund(public.escrows, timestamptz) from public, anon, authenticated;
grant execute on function private.dispute_settle_refund(public.escrows, timestamptz) to service_role;

-- split with P = p_payee_amount (checked by private.dispute_check_split): the payer's part first
-- (R - P with the payer fee and VAT on it, half-up), then the rest of the hold is the release of
-- P: the payee's P less the seller fee on P, the VAT on P to VAT, and everything else (the fees on
-- P and the last kobo of rounding) to the platform. The escrow is released with P. transfer_id:
-- the release part's transfer (milestones are cancelled by a split, as before, not paid with it).
create function private.dispute_settle_split(
  e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamptz,
  out payee_gets bigint, out payer_gets bigint, out transfer_id uuid
)
language plpgsql
set search_path = ''
as $$
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
    raise exception 'the hold of escrow % does not cover the split', e.id using errcode = 'ES409';
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
$$;
comment on function private.dispute_settle_split(public.escrows, public.disputes, bigint, timestamptz) is
  'A dispute settled by a split: R - P with the payer fee and VAT on it back to the payer, P less the seller fee to '
  'the payee, the VAT on P to VAT and the rest to the platform; the escrow released with P. Answers what each party '
  'received and the release part''s transfer. Called by private.dispute_settle under its locks.';
revoke execute on function private.dispute_settle_split(public.escrows, public.disputes, bigint, timestamptz)
  from public, anon, authenticated;
grant execute on function private.dispute_settle_split(public.escrows, public.disputes, bigint, timestamptz)
  to service_role;

-- =============================================================================================
-- Settling: dispute_settle redefined to call the outcome's function (same signature and grants)
-- =============================================================================================

-- Resolves dispute d of escrow e with an outcome: moves the money (the outcome's function), closes
-- the open milestones, starts the payee's payout, records who resolved it, closes the open
-- proposals, tells both parties (in the app and by SMS). Returns the payee's bank payout
-- transaction to start, if any.
create or replace function private.dispute_settle(
  e public.escrows, d public.disputes, p_outcome text, p_payee_amount bigint, p_resolved_by uuid, p_resolution text,
  p_now timestamptz
) returns uuid
language plpgsql
set search_path = ''
as $$
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
$$;
comment on function private.dispute_settle(public.escrows, public.disputes, text, bigint, uuid, text, timestamptz) is
  'Resolves a dispute with release, refund or split: the money out of the hold (to exactly 0), the escrow closed, '
  'both parties told in the app and by SMS. The caller holds the escrow lock.';
revoke execute on function private.dispute_settle(public.escrows, public.disputes, text, bigint, uuid, text, timestamptz)
  from public, anon, authenticated;
grant execute on function private.dispute_settle(public.escrows, public.disputes, text, bigint, uuid, text, timestamptz)
  to service_role;
