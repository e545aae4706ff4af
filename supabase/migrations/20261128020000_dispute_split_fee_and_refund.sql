-- =============================================================================================
-- Dispute splits of merchant escrows: the merchant's fee and the refund through the provider
-- =============================================================================================
-- private.dispute_settle_split was restated twice in parallel: once so that its release part
-- gives the merchant its half-up share on P (private.merchant_fee_pay, out of the payee's part),
-- once so that its refund part goes through private.escrow_pay_back (the payer's wallet for an app
-- escrow, a refund through the payments provider for a merchant's). Each restatement lacks the
-- other's change, and the later one would win; this is the function with both.

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
comment on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) is 'A dispute settled by a split: R - P with the payer fee and VAT on it back to the payer (private.escrow_pay_back: the wallet, or for a merchant escrow a refund through the provider), P less the seller fee and the merchant''s share (merchant_fee_pay) to the payee, the merchant''s share to its wallet, the VAT on P to VAT and the rest to the platform; the escrow released with P. Answers what each party received and the release part''s transfer. Called by private.dispute_settle under its locks.';
revoke all on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) from public;
grant execute on function private.dispute_settle_split(e public.escrows, d public.disputes, p_payee_amount bigint, p_now timestamp with time zone, OUT payee_gets bigint, OUT payer_gets bigint, OUT transfer_id uuid) to service_role;
