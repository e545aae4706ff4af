-- =============================================================================================
-- Escrows: a unique created_at instead of a table-wide lock (docs/performance.md)
--
-- escrow-list pages with a plain `before` timestamp, so no two escrows may share a created_at
-- (the unique index escrows_created_at_key, from the start). A trigger also made every new escrow
-- later than the latest one, reading max(created_at) under an advisory lock on the whole table:
-- every escrow creation waited for every other one to commit. The trigger goes, and with it the
-- index its max() needed; private.escrow_create tries the next microsecond on the rare
-- collision. The values stay unique; they are no longer in commit order, which no cursor needs.
-- =============================================================================================

drop trigger escrows_created_at_increasing on public.escrows;
drop index public.escrows_created_idx;

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
  v_at timestamptz := now();
  v_constraint text;
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

  -- created_at is unique across escrows (escrows_created_at_key), so escrow-list's `before`
  -- cursor loses and repeats nothing; on the rare collision the next microsecond is tried
  loop
    begin
      insert into public.escrows (initiator_id, counterparty_id, counterparty_phone, category, payer_role, title,
                                  description, transaction_type, release_type, amount, status, inspection_period_days,
                                  payer_fee, vat, total_charge, seller_fee, seller_payout, invite_token_hash, created_at)
      values (p_initiator, v_counterparty, p_counterparty_phone, p_category, p_payer_role, p_title,
              coalesce(p_description, ''), r.transaction_type, r.release_type, p_amount, v_status,
              r.inspection_period_days, p_payer_fee, p_vat, p_amount + p_payer_fee + p_vat, p_seller_fee,
              p_amount - p_seller_fee, p_invite_token_hash, v_at)
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

