-- =============================================================================================
-- Merchant escrows: the parties are told in the app too
-- =============================================================================================
-- A merchant escrow's parties were told by SMS only. Each now gets an in-app notification as well
-- (event escrow_created, kind merchant_escrow): the merchant's name, the category, the amount and
-- the party's role, nothing else the merchant wrote, as in the SMS. A placeholder's notification
-- waits for whoever signs up with its phone. private.merchant_escrow_create is restated with the
-- two notifications; nothing else in it changes.

create or replace function private.merchant_escrow_create(p_merchant uuid, p_reference text, p_body_hash text, p_category public.escrow_category, p_title text, p_description text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_buyer_phone text, p_seller_phone text, p_merchant_fee bigint, p_metadata json, p_sms_per_hour integer, p_sms_per_day integer)
returns table(escrow_id uuid, created boolean)
language plpgsql
set search_path = ''
as $function$
declare
  r private.category_rules;
  e public.escrows;
  v_existing private.merchant_escrows;
  v_name text;
  v_buyer uuid;
  v_seller uuid;
  v_at timestamptz := now();
  v_constraint text;
begin
  -- one creation per reference at a time: a concurrent request with it waits here, then finds the
  -- escrow the first one made
  perform pg_catalog.pg_advisory_xact_lock(
    pg_catalog.hashtextextended('merchant_escrow:' || p_merchant::text || ':' || p_reference, 0));
  select * into v_existing from private.merchant_escrows m
   where m.merchant_id = p_merchant and m.reference = p_reference;
  if found then
    if v_existing.body_hash <> p_body_hash then
      perform private.refuse(409, 'merchant_reference_reused',
        pg_catalog.jsonb_build_object('field', 'reference', 'escrow_id', v_existing.escrow_id));
    end if;
    return query select v_existing.escrow_id, false;
    return;
  end if;

  select * into r from private.category_rules where category = p_category;
  select m.name into v_name from private.merchants m where m.id = p_merchant;
  -- in phone order, so that two creations naming the same two new phones cannot deadlock
  if p_buyer_phone < p_seller_phone then
    v_buyer := private.user_for_phone(p_buyer_phone);
    v_seller := private.user_for_phone(p_seller_phone);
  else
    v_seller := private.user_for_phone(p_seller_phone);
    v_buyer := private.user_for_phone(p_buyer_phone);
  end if;

  loop
    begin
      insert into public.escrows (initiator_id, counterparty_id, counterparty_phone, category, payer_role, title,
                                  description, transaction_type, release_type, amount, status, inspection_period_days,
                                  payer_fee, vat, total_charge, seller_fee, seller_payout, invite_token_hash,
                                  merchant_id, merchant_fee, created_at)
      values (v_buyer, v_seller, p_seller_phone, p_category, 'initiator', p_title, coalesce(p_description, ''),
              r.transaction_type, r.release_type, p_amount, 'draft', r.inspection_period_days, p_payer_fee, p_vat,
              p_amount + p_payer_fee + p_vat, p_seller_fee, p_amount - p_seller_fee,
              -- no invitation: a hash no token has
              'merchant:' || gen_random_uuid()::text, p_merchant, p_merchant_fee, v_at)
      returning * into e;
      exit;
    exception when unique_violation then
      get stacked diagnostics v_constraint = constraint_name;
      if v_constraint <> 'escrows_created_at_key' then
        raise;
      end if;
      v_at := v_at + interval '1 microsecond';
    end;
  end loop;
  insert into public.conversations (escrow_id) values (e.id);
  insert into private.merchant_escrows (escrow_id, merchant_id, reference, body_hash, metadata)
  values (e.id, p_merchant, p_reference, p_body_hash, p_metadata);

  perform private.queue_merchant_escrow_sms(e, v_name, p_buyer_phone, 'payer', p_sms_per_hour, p_sms_per_day);
  perform private.queue_merchant_escrow_sms(e, v_name, p_seller_phone, 'payee', p_sms_per_hour, p_sms_per_day);
  -- and in the app, where a placeholder finds them once it signs up: the merchant's name, the
  -- category, the amount and the party's role, nothing else the merchant wrote
  perform private.notify(x.party, e.id, 'escrow_created',
    pg_catalog.jsonb_build_object('kind', 'merchant_escrow', 'merchant', v_name, 'side', x.side,
                                  'category', e.category, 'amount', e.amount),
    'escrow', e.id, 'View escrow')
     from (values (v_buyer, 'payer'), (v_seller, 'payee')) as x(party, side);
  return query select e.id, true;
end
$function$;
comment on function private.merchant_escrow_create(p_merchant uuid, p_reference text, p_body_hash text, p_category public.escrow_category, p_title text, p_description text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_buyer_phone text, p_seller_phone text, p_merchant_fee bigint, p_metadata json, p_sms_per_hour integer, p_sms_per_day integer) is 'merchant-escrow-create: a draft escrow between the buyer (initiator, payer) and the seller, placeholders for phones without an account, its conversation, the parties'' SMS and in-app notifications; the escrow of the reference when it exists with the same body, merchant_reference_reused (409) with another.';
revoke all on function private.merchant_escrow_create(p_merchant uuid, p_reference text, p_body_hash text, p_category public.escrow_category, p_title text, p_description text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_buyer_phone text, p_seller_phone text, p_merchant_fee bigint, p_metadata json, p_sms_per_hour integer, p_sms_per_day integer) from public;
grant execute on function private.merchant_escrow_create(p_merchant uuid, p_reference text, p_body_hash text, p_category public.escrow_category, p_title text, p_description text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_buyer_phone text, p_seller_phone text, p_merchant_fee bigint, p_metadata json, p_sms_per_hour integer, p_sms_per_day integer) to service_role;
