-- =============================================================================================
-- Escrow creation and the invitation (escrow-create).
--
-- SMS carry no text written by another user: an invite names the inviter's first name (rendered
-- safely: its first word of letters, at most 20 characters), the category and the amount (the
-- words are shared/messages.ts's; this area records the facts). One
-- phone receives at most INVITE_SMS_MAX_PER_PHONE_PER_DAY invite SMS in 24 hours from all
-- initiators together; further invites are recorded withheld ('invite_daily_cap') and never sent.
-- (The per-initiator limit on escrows whose invite goes out at once is taken by shared/escrow.ts,
-- in the same transaction as the creation.)
-- =============================================================================================

-- =============================================================================================
-- What an invite SMS may say
-- =============================================================================================

-- The inviter's first name as an SMS may show it: the leading letters (Unicode letters and their
-- combining marks, apostrophes, hyphens) of its first word, at most 20 characters, or null when
-- nothing is left (the SMS then says "Someone": shared/messages.ts). No digit, dot, colon or slash
-- survives, so a "name" cannot carry a code or a link. The collation is the built-in Unicode one,
-- so letters are letters whatever the database's locale.
create function private.sms_first_name(p_first_name text)
returns text
language sql
immutable
set search_path = ''
as $$
  select nullif(pg_catalog.rtrim(pg_catalog.left(
           pg_catalog.substring(coalesce(p_first_name, '') collate pg_catalog.pg_c_utf8,
                                '^[[:space:]]*([[:alpha:]][[:alpha:]\u0300-\u036f''’-]*)'),
           20), '''’-'), '');
$$;
comment on function private.sms_first_name(text) is
  'A user-written first name made safe for an SMS: the first word''s leading letters, at most 20 characters, else '
  'null.';
revoke execute on function private.sms_first_name(text) from public, anon, authenticated;
grant execute on function private.sms_first_name(text) to service_role;

-- INVITE_SMS_MAX_PER_PHONE_PER_DAY, as the functions pass it for their transaction
-- (set_config('escrow.invite_sms_max_per_phone_per_day', ..., true)); 3, its default, otherwise.
create function private.invite_sms_cap()
returns integer
language sql
stable
set search_path = ''
as $$
  select coalesce(nullif(pg_catalog.current_setting('escrow.invite_sms_max_per_phone_per_day', true), '')::integer, 3);
$$;
comment on function private.invite_sms_cap() is
  'Invite SMS one phone may receive in 24 hours: the transaction''s escrow.invite_sms_max_per_phone_per_day, else 3.';
revoke execute on function private.invite_sms_cap() from public, anon, authenticated;
grant execute on function private.invite_sms_cap() to service_role;

-- Queues the invite SMS of escrow e to its counterparty's phone: at creation when the counterparty
-- pays, after the money arrived when the initiator pays. The message carries the inviter's safe
-- first name, the category and the amount (the invitee's role follows from the kind); never the
-- title or the description. Each phone gets at most invite_sms_cap() invite SMS in any 24 hours
-- from all initiators together: the slot is taken through private.rate_limit_take, whose advisory
-- lock on the phone's key is held to the end of the transaction, so two initiators inviting the
-- same phone at the same moment cannot both take the last slot. Over the cap the message is
-- recorded withheld ('invite_daily_cap') and never sent; the invitee finds the escrow in the app.
-- Returns whether the message is to be sent.
create function private.queue_invite_sms(e public.escrows)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_name text;
  v_cap integer := private.invite_sms_cap();
  v_withheld text;
begin
  select private.sms_first_name(first_name) into v_name from public.profiles where id = e.initiator_id;
  if v_cap <= 0 or private.rate_limit_take(pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
       'key', 'invite_sms:' || e.counterparty_phone, 'limit', v_cap, 'window_seconds', 86400))) > 0 then
    v_withheld := 'invite_daily_cap';
  end if;
  insert into private.sms_outbox (phone, message, sent_at, withheld)
  values (e.counterparty_phone,
          pg_catalog.jsonb_build_object(
            'kind', case when e.payer_role = 'counterparty' then 'escrow_invite' else 'escrow_invite_funded' end,
            'inviter', v_name, 'category', e.category, 'amount', e.amount),
          null, v_withheld);
  return v_withheld is null;
end
$$;
comment on function private.queue_invite_sms(public.escrows) is
  'Queues an escrow''s invite SMS (no user-written text but a safe first name), withheld over the per-phone daily '
  'cap; true when it is to be sent.';
revoke execute on function private.queue_invite_sms(public.escrows) from public, anon, authenticated;
grant execute on function private.queue_invite_sms(public.escrows) to service_role;

-- =============================================================================================
-- escrow-create
-- =============================================================================================

-- The escrow (draft when the initiator pays, invite_pending when the counterparty does), its
-- conversation, and the notifications. The counterparty is linked at once when the phone has an
-- account; when the counterparty pays they are invited at once (in the app with the deal's own
-- words; by SMS with none of them).
create function private.escrow_create(
  p_initiator uuid, p_category public.escrow_category, p_payer_role text, p_title text, p_description text,
  p_counterparty_phone text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint,
  p_invite_token_hash text
) returns table (escrow_id uuid, conversation_id uuid)
language plpgsql
set search_path = ''
as $$
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
    raise exception 'the counterparty must be someone else' using errcode = 'ES422';
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
$$;
comment on function private.escrow_create(uuid, public.escrow_category, text, text, text, text, bigint, bigint,
  bigint, bigint, text) is
  'escrow-create: the escrow, its conversation, the initiator''s notification and, when the counterparty pays, the '
  'invitation (notification and capped SMS).';
revoke execute on function private.escrow_create(uuid, public.escrow_category, text, text, text, text, bigint, bigint,
  bigint, bigint, text)
  from public, anon, authenticated;
grant execute on function private.escrow_create(uuid, public.escrow_category, text, text, text, text, bigint, bigint,
  bigint, bigint, text)
  to service_role;
