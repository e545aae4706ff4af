-- =============================================================================================
-- Hardening (issue 8, items 3 and 4): invitations.
--
-- SMS carry no text written by another user: an invite names the inviter's first name (rendered
-- safely: its first word of letters, at most 20 characters), the category and the amount; the
-- funding-shortfall SMS no longer quotes the title. One phone receives at most
-- INVITE_SMS_MAX_PER_PHONE_PER_DAY invite SMS in 24 hours from all initiators together; further
-- invites are recorded withheld ('invite_daily_cap') and never sent. (The per-initiator limit on
-- escrows whose invite goes out at once is taken by shared/escrow.ts, in the same transaction as
-- the creation.)
--
-- Nothing tells an initiator whether the invited phone has an account: the escrow's link to the
-- counterparty (counterparty_id) is kept for the SQL functions and the row-level security, but
-- the API roles cannot read that column; they read revealed_counterparty_id, which is filled only
-- once the counterparty has accepted or declined. Linking a counterparty who signs up later no
-- longer touches updated_at.
-- =============================================================================================

-- ---------------------------------------------------------------------------------------------
-- Escrows: when the counterparty declined, and the counterparty the initiator may see
-- ---------------------------------------------------------------------------------------------

alter table public.escrows add column declined_at timestamptz;
comment on column public.escrows.declined_at is 'When the counterparty declined (the escrow is then cancelled, or refunded when it was funded).';

alter table public.escrows add column revealed_counterparty_id uuid
  generated always as (case when accepted_at is not null or declined_at is not null then counterparty_id end) stored;
comment on column public.escrows.revealed_counterparty_id is
  'counterparty_id once the counterparty has accepted or declined, else null: what answers to the initiator may show.';
comment on column public.escrows.counterparty_id is
  'The invited counterparty''s account, linked at creation or when that phone signs up. Not readable by the API roles: before acceptance it would tell the initiator whether the phone has an account (see revealed_counterparty_id).';

-- The API roles read every column but counterparty_id (and the invite token's hash, which no
-- client needs). Row-level security still uses counterparty_id: policies need no column privilege.
-- A column added to public.escrows later is not readable by `authenticated` until granted here.
revoke select on public.escrows from authenticated;
grant select (
  id, initiator_id, counterparty_phone, category, payer_role, title, description, transaction_type, release_type,
  amount, currency, status, inspection_period_days, payer_fee, vat, total_charge, seller_fee, seller_payout,
  released_amount, awaiting_bank_transfer_at, accepted_at, funded_at, delivered_at, inspection_ends_at, released_at,
  refunded_at, cancelled_at, ended_at, created_at, updated_at, declined_at, revealed_counterparty_id
) on public.escrows to authenticated;

-- ---------------------------------------------------------------------------------------------
-- What an invite SMS may say
-- ---------------------------------------------------------------------------------------------

-- The inviter's first name as an SMS may show it: the leading letters (Unicode letters and their
-- combining marks, apostrophes, hyphens) of its first word, at most 20 characters, or 'Someone'
-- when nothing is left. No digit, dot, colon or slash survives, so a "name" cannot carry a code or
-- a link. The collation is the built-in Unicode one, so letters are letters whatever the
-- database's locale.
create function private.sms_first_name(p_first_name text)
returns text
language sql
immutable
set search_path = ''
as $$
  select coalesce(
    nullif(pg_catalog.rtrim(pg_catalog.left(
      pg_catalog.substring(coalesce(p_first_name, '') collate pg_catalog.pg_c_utf8,
                           '^[[:space:]]*([[:alpha:]][[:alpha:]\u0300-\u036f''’-]*)'),
      20), '''’-'), ''),
    'Someone');
$$;
comment on function private.sms_first_name(text) is
  'A user-written first name made safe for an SMS: the first word''s leading letters, at most 20 characters, else ''Someone''.';
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

-- The word an SMS uses for a category.
create function private.category_sms_word(p_category public.escrow_category)
returns text
language sql
immutable
set search_path = ''
as $$
  select case p_category
           when 'goods_products' then 'goods'
           when 'hiring' then 'hiring'
           when 'auto_dealership' then 'vehicle'
           when 'p2p_crypto' then 'crypto'
         end;
$$;
comment on function private.category_sms_word(public.escrow_category) is
  'The word an SMS uses for an escrow category (goods, hiring, vehicle, crypto).';
revoke execute on function private.category_sms_word(public.escrow_category) from public, anon, authenticated;
grant execute on function private.category_sms_word(public.escrow_category) to service_role;

-- Queues the invite SMS of escrow e to its counterparty's phone: at creation when the counterparty
-- pays, after the money arrived when the initiator pays. The text is built from fixed words, the
-- inviter's safe first name, the category, the amount and the invitee's role; never the title or
-- the description. Each phone gets at most invite_sms_cap() invite SMS in any 24 hours from all
-- initiators together: the slot is taken through private.rate_limit_take, whose advisory lock on
-- the phone's key is held to the end of the transaction, so two initiators inviting the same
-- phone at the same moment cannot both take the last slot. Over the cap the message is recorded
-- withheld ('invite_daily_cap') and never sent; the invitee finds the escrow in the app.
-- Returns whether the message is to be sent.
create function private.queue_invite_sms(e public.escrows)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  r private.category_rules;
  v_name text;
  v_cap integer := private.invite_sms_cap();
  v_withheld text;
begin
  select * into r from private.category_rules where category = e.category;
  select private.sms_first_name(first_name) into v_name from public.profiles where id = e.initiator_id;
  if v_cap <= 0 or private.rate_limit_take(pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
       'key', 'invite_sms:' || e.counterparty_phone, 'limit', v_cap, 'window_seconds', 86400))) > 0 then
    v_withheld := 'invite_daily_cap';
  end if;
  insert into private.sms_outbox (phone, body, sent_at, withheld)
  values (e.counterparty_phone,
          case when e.payer_role = 'counterparty' then
            pg_catalog.format('%s invited you to a %s escrow of %s as the %s. Open the Escrow app with this number to review it.',
                              coalesce(v_name, 'Someone'), private.category_sms_word(e.category), private.naira(e.amount), r.payer_label)
          else
            pg_catalog.format('%s invited you to a %s escrow of %s as the %s, and the money is already in escrow. Open the Escrow app with this number to accept it.',
                              coalesce(v_name, 'Someone'), private.category_sms_word(e.category), private.naira(e.amount), r.payee_label)
          end,
          null, v_withheld);
  return v_withheld is null;
end
$$;
comment on function private.queue_invite_sms(public.escrows) is
  'Queues an escrow''s invite SMS (no user-written text but a safe first name), withheld over the per-phone daily cap; true when it is to be sent.';
revoke execute on function private.queue_invite_sms(public.escrows) from public, anon, authenticated;
grant execute on function private.queue_invite_sms(public.escrows) to service_role;



-- ---------------------------------------------------------------------------------------------
-- escrow-create: the invite SMS through queue_invite_sms
-- ---------------------------------------------------------------------------------------------

create or replace function private.escrow_create(
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
    pg_catalog.format('You created "%s" for %s.', p_title, private.naira(p_amount)), 'escrow', e.id, 'View escrow');
  if v_status = 'invite_pending' then
    -- the counterparty pays: invite them at once (in the app with the deal's own words; by SMS
    -- with none of them)
    perform private.notify(v_counterparty, e.id, 'invite_received',
      pg_catalog.format('%s invited you to "%s" for %s as %s.', v_name, p_title, private.naira(p_amount), r.payer_label),
      'escrow', e.id, 'Review invitation');
    perform private.queue_invite_sms(e);
  end if;
  return query select e.id, v_conversation;
end
$$;
comment on function private.escrow_create(uuid, public.escrow_category, text, text, text, text, bigint, bigint, bigint, bigint, text) is
  'escrow-create: the escrow, its conversation, the initiator''s notification and, when the counterparty pays, the invitation (notification and capped SMS).';

-- ---------------------------------------------------------------------------------------------
-- Funding: the invite of an initiator-paid escrow through queue_invite_sms
-- ---------------------------------------------------------------------------------------------

create or replace function private.escrow_mark_funded(e public.escrows, p_tx uuid)
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
    pg_catalog.format('%s is locked in escrow for "%s".', private.naira(e.total_charge), e.title), 'escrow', e.id, 'View escrow');
  if v_next = 'active' then
    select first_name || ' ' || last_name into v_name from public.profiles where id = e.initiator_id;
    perform private.notify(e.counterparty_id, e.id, 'invite_received',
      pg_catalog.format('%s invited you to "%s" for %s; the money is already in escrow.', v_name, e.title, private.naira(e.amount)),
      'escrow', e.id, 'Review invitation');
    perform private.queue_invite_sms(e);
  else
    perform private.notify(private.payee_of(e), e.id, 'funded',
      pg_catalog.format('"%s" is funded: %s is in escrow. You can deliver now.', e.title, private.naira(e.amount)),
      'escrow', e.id, 'View escrow');
  end if;
  return v_next;
end
$$;
comment on function private.escrow_mark_funded(public.escrows, uuid) is
  'Locks an escrow''s funds and moves it on: draft -> active (the counterparty is invited, SMS capped per phone), or accepted -> funded.';

-- The shortfall SMS names amounts and the category, not the title (which the payer may not have
-- written: the initiator titles an escrow the counterparty pays).
create or replace function private.bank_transfer_received(
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
  select id into v_id from public.escrows
   where awaiting_bank_transfer_at is not null
     and (status = 'draft' or (status = 'active' and funded_at is null))
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
  perform private.queue_sms(v_phone, pg_catalog.format(
    'We received %s and put it in your Escrow wallet. Your %s escrow needs %s: send %s more to fund it.',
    private.naira(p_received), private.category_sms_word(e.category), private.naira(e.total_charge),
    private.naira(e.total_charge - coalesce(v_balance, 0))));
  perform private.notify(p_user, e.id, 'funding_shortfall', pg_catalog.format(
    'We received %s; "%s" needs %s more to be funded. The money is in your wallet.',
    private.naira(p_received), e.title, private.naira(e.total_charge - coalesce(v_balance, 0))), 'escrow', e.id, 'Fund escrow');
  return 'deposit:shortfall';
end
$$;
comment on function private.bank_transfer_received(uuid, bigint, text, text, jsonb) is
  'A bank transfer into a virtual account: credits the wallet once, funds the oldest waiting escrow when covered, else tells the payer the shortfall.';

-- ---------------------------------------------------------------------------------------------
-- Decline: recorded, so the initiator may now see who declined
-- ---------------------------------------------------------------------------------------------

create or replace function private.escrow_decline(p_escrow uuid, p_actor uuid)
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
  if e.status in ('draft', 'invite_pending') or (e.status = 'active' and e.funded_at is null) then
    update public.escrows set declined_at = now() where id = e.id;
    return private.escrow_close_unfunded(e, 'declined', 'declined by the counterparty');
  elsif e.status = 'active' and e.funded_at is not null and e.accepted_at is null then
    update public.escrows set declined_at = now() where id = e.id;
    return private.escrow_refund_unaccepted(e, 'declined');
  end if;
  perform private.refuse_state(e, 'decline');
  return null;
end
$$;
comment on function private.escrow_decline(uuid, uuid) is
  'escrow-decline by the invited counterparty: cancels an unfunded escrow or refunds a funded, unaccepted one; records declined_at.';

-- ---------------------------------------------------------------------------------------------
-- A counterparty who signs up later: linked without a visible change
-- ---------------------------------------------------------------------------------------------

-- updated_at is left alone: the initiator reads it, and a change at the invitee's sign-up would
-- tell them that the phone had no account until now.
create or replace function private.link_invited_escrows()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  update public.escrows set counterparty_id = new.id
   where counterparty_phone = new.phone and counterparty_id is null and initiator_id <> new.id;
  return new;
end
$$;
comment on function private.link_invited_escrows() is
  'Trigger on private.users: links the escrows waiting for the new account''s phone, leaving updated_at unchanged.';
